package assemble

import (
	"context"
	"errors"
	"os"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/doctor"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// DoctorOptions are gatehouse doctor's inputs for the user of p, with the
// configuration load loads as the files say now (a load that fails is
// the report's first problem, not an error here). claudeManaged names
// Claude Code's managed settings file; "" means the platform's.
func DoctorOptions(p Paths, load policy.LoadOptions, claudeManaged string) doctor.Options {
	loaded, err := policy.Load(load)
	o := doctor.Options{
		Loaded: loaded, LoadErr: err, Home: p.Home, ManagedFile: load.ManagedFile,
		Keys: p.Keys, InitPath: p.InitPath, ClaudeManaged: claudeManaged, ClaudeUser: p.ClaudeSettings,
		OpenAudit: func(ctx context.Context) (*audit.Store, error) { return openAudit(ctx, p) },
	}
	if err == nil {
		o.AuditPath, o.ToolCacheRoot = p.Audit, p.ToolCacheRoot
	}
	return o
}

// doctorFor is the doctor the service runs for GET /v1/doctor and the
// dashboard: its user's, told the service's own status.
func doctorFor(p Paths, load policy.LoadOptions) func(context.Context, *api.Status) *api.DoctorReport {
	return func(ctx context.Context, self *api.Status) *api.DoctorReport {
		o := DoctorOptions(p, load, "")
		o.Service = self
		return &doctor.Run(ctx, o).DoctorReport
	}
}

// openAudit opens p's audit database; nil (and no error) when none has
// been written yet.
func openAudit(ctx context.Context, p Paths) (*audit.Store, error) {
	if _, err := os.Stat(p.Audit); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return audit.Open(ctx, audit.Options{Path: p.Audit, Keys: p.Keys})
}

// orDoctor is d, or this user's doctor when d is nil.
func orDoctor(d func(context.Context, *api.Status) *api.DoctorReport, p Paths, load policy.LoadOptions) func(context.Context, *api.Status) *api.DoctorReport {
	if d != nil {
		return d
	}
	return doctorFor(p, load)
}
