package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
	"github.com/gatehouse-dev/gatehouse/internal/version"
)

var versionCmd = &command{name: "version",
	summary: "print the version, the commit and the build date",
	usage: `usage: gatehouse version [--json]

Prints the release this binary is (its version, the commit it was built from
and when), and its build id, which its sandbox init (gatehouse-init) must
share.`,
	flags: runVersion,
}

func runVersion(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("version: unexpected argument %q", args[0])
		}
		v := version.Get()
		if *asJSON {
			writeJSON(env.Stdout, struct {
				version.Info
				BuildID string `json:"build_id"`
			}{v, buildid.ID()})
			return nil
		}
		fmt.Fprintf(env.Stdout, "gatehouse %s\ncommit:   %s\nbuilt:    %s\nbuild id: %s\n", v.Version, v.Commit, v.Date, buildid.ID())
		return nil
	}
}
