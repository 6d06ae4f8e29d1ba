package doctor

// This file reads the user's state for the report: the audit trail and
// its export, the egress CA, the credential mappings and the tool caches.
// No credential value is kept or printed: they name ids.

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/egressca"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

// Audit is the audit trail's state: where its key is kept, and the
// executions it has not closed.
type Audit struct {
	Path string `json:"path"`
	// KeySource is keychain or file; KeyLocation the item or the file.
	// Before the first event it says where the key will go.
	KeySource   string `json:"key_source"`
	KeyLocation string `json:"key_location,omitempty"`
	Begun       bool   `json:"begun"`
	Open        int    `json:"open_executions"`
	Required    bool   `json:"audit_required"`
	Error       string `json:"error,omitempty"`
	// Export is the fleet export (exec.audit.export.otlp), when on.
	Export *Export `json:"export,omitempty"`
}

// Export is the fleet export: where it goes, who set it, and how far it
// has got.
type Export struct {
	Endpoint string `json:"endpoint"`
	Protocol string `json:"protocol"`
	// Managed says the managed file set the endpoint (the user cannot
	// turn it off).
	Managed bool `json:"managed"`
	// Cursor is the last row the collector acknowledged; Pending the
	// events after it.
	Cursor  int64 `json:"cursor_row"`
	Pending int64 `json:"pending_events"`
	// MissingCredentials are header credentials not in the keychain.
	MissingCredentials []string `json:"missing_credentials,omitempty"`
	// KeychainError says why the header credentials could not be looked
	// up.
	KeychainError string `json:"keychain_error,omitempty"`
}

// CA is the egress CA masked credentials use: whether it exists yet, its
// fingerprint and expiry.
type CA struct {
	Item        string    `json:"keychain_item"`
	Exists      bool      `json:"exists"`
	Fingerprint string    `json:"sha256_fingerprint,omitempty"`
	NotAfter    time.Time `json:"not_after,omitzero"`
	Masked      int       `json:"masked_mappings"`
	Error       string    `json:"error,omitempty"`
}

// Credential is one mapping of exec.credentials, and how it reaches
// commands now: for mode auto, as the value stored in the keychain
// decides (broker.ShapeOf). No value is kept or printed.
type Credential struct {
	policy.MappingMode
	// Now is masked or injected: what the mapping does with the value
	// stored now; "" when it cannot be told (Error says why).
	Now string `json:"now,omitempty"`
	// Reason says why, for mode auto.
	Reason string `json:"reason,omitempty"`
	// Bound are the hosts a masked credential is bound to now.
	Bound []string `json:"bound_hosts,omitempty"`
	// Unusable are those of Bound no egress allowlist allows.
	Unusable []string `json:"unusable_hosts,omitempty"`
	// Missing says the keychain holds no value of the credential.
	Missing bool   `json:"missing,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Caches are the agents' tool caches and their sizes.
type Caches struct {
	Root   string       `json:"root"`
	Max    string       `json:"max"`
	Total  int64        `json:"total_bytes"`
	Agents []AgentCache `json:"agents"`
	Error  string       `json:"error,omitempty"`
}

// AgentCache is one agent's tool cache.
type AgentCache struct {
	Agent string `json:"agent"`
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
}

// MeasureCaches measures the tool caches below root.
func MeasureCaches(root string, cfg *policy.Config) Caches {
	r := Caches{Root: root, Max: humanize.IBytes(uint64(cfg.Exec.Sandbox.CacheMax)), Agents: []AgentCache{}}
	names, err := toolcache.Agents(root)
	if err != nil {
		r.Error = err.Error()
	}
	for _, n := range names {
		d := filepath.Join(root, n)
		size, _ := toolcache.Size(d)
		r.Agents = append(r.Agents, AgentCache{Agent: n, Dir: d, Bytes: size})
		r.Total += size
	}
	return r
}

// Credentials says how each mapping of l reaches commands, reading the
// values of mode auto's mappings from store (and keeping only their
// shape).
func Credentials(store keyring.Store, l *policy.Loaded) []Credential {
	out := []Credential{}
	for _, m := range l.CredentialModes() {
		r := Credential{MappingMode: m}
		v, err := store.Get(m.ID)
		switch {
		case errors.Is(err, keyring.ErrNotFound):
			r.Missing = true
		case err != nil:
			r.Error = err.Error()
		}
		switch m.Mode {
		case policy.ModeMask:
			r.Now, r.Bound = "masked", m.Hosts
		case policy.ModeInject:
			r.Now = "injected"
		default:
			if err != nil {
				break
			}
			sh := broker.ShapeOf(v)
			r.Now, r.Reason = "injected", sh.Why
			if sh.Masked {
				r.Now, r.Reason, r.Bound = "masked", sh.Kind, sh.Hosts
			}
		}
		r.Unusable = l.Config.HostsNotAllowed(r.Bound, "")
		out = append(out, r)
	}
	return out
}

// readCA reads the egress CA without making one.
func readCA(keys keyring.Store, cfg *policy.Config) CA {
	r := CA{Item: egressca.Item, Masked: len(cfg.CredentialConfig().Masked)}
	ca, err := egressca.Peek(keys)
	switch {
	case errors.Is(err, keyring.ErrNotFound):
	case err != nil:
		r.Error = err.Error()
	default:
		r.Exists, r.Fingerprint, r.NotAfter = true, ca.Fingerprint(), ca.Cert.NotAfter
	}
	return r
}

// readAudit reads the audit trail's key source and open executions.
func readAudit(ctx context.Context, o Options) Audit {
	a := Audit{Path: o.AuditPath}
	s, err := openAudit(ctx, o)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if s != nil {
		defer s.Close()
		if a.KeySource, a.KeyLocation, err = s.KeySource(ctx); err != nil {
			a.Error = err.Error()
			return a
		}
		open, err := s.Unfinished(ctx)
		if err != nil {
			a.Error = err.Error()
			return a
		}
		a.Open = len(open)
	}
	if a.KeySource != "" {
		a.Begun = true
		return a
	}
	a.KeySource = audit.KeySourceKeychain
	if _, err := o.Keys.List(); errors.Is(err, keyring.ErrUnavailable) {
		a.KeySource = audit.KeySourceFile
	}
	return a
}

func openAudit(ctx context.Context, o Options) (*audit.Store, error) {
	if o.OpenAudit == nil {
		return nil, nil
	}
	return o.OpenAudit(ctx)
}

// readExport reads how far the fleet export has got, and which of its
// header credentials are missing (by name: no value is read).
func readExport(ctx context.Context, o Options, x policy.OTLPExport, managed bool) *Export {
	e := &Export{Endpoint: x.Endpoint, Protocol: x.Protocol, Managed: managed}
	if s, err := openAudit(ctx, o); err == nil && s != nil {
		defer s.Close()
		e.Cursor, _ = s.ExportCursor(ctx, export.CursorName)
		e.Pending, _ = s.Backlog(ctx, e.Cursor)
	}
	if ids := x.Headers.Credentials(); len(ids) > 0 {
		have, err := broker.List(o.Keys)
		if err != nil {
			e.KeychainError = err.Error()
			return e
		}
		for _, id := range ids {
			if !slices.ContainsFunc(have, func(b broker.Entry) bool { return b.ID == id }) {
				e.MissingCredentials = append(e.MissingCredentials, id)
			}
		}
	}
	return e
}
