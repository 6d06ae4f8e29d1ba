package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

var statusCmd = &command{name: "status",
	summary: "show the running service: version, sandbox now, policy, recent events",
	usage:   statusUsage,
	flags:   runStatus,
}

const statusUsage = `usage: gatehouse status [--json] [--events N]

Asks the running service for its state: version, the sandbox a command would
get now, the policy in force, and the N most recent events (default 10).`

func runStatus(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	n := fl.Int("events", 10, "")
	return func(ctx context.Context, env *Env, args []string) error {
		c, err := serviceClient(env)
		if err != nil {
			return err
		}
		st, err := c.Status(ctx)
		if err != nil {
			if errors.Is(err, localapi.ErrNotRunning) {
				return withHint(err, notRunningHint)
			}
			return err
		}
		if *n > 0 {
			events, err := c.Events(ctx, *n)
			if err != nil {
				return err
			}
			if *asJSON {
				writeJSON(env.Stdout, map[string]any{"status": st, "events": events})
				return nil
			}
			defer func() {
				fmt.Fprintf(env.Stdout, "recent events:   %d\n", len(events))
				for _, e := range events {
					line := fmt.Sprintf("  %s %s %-10s %-10s %-5s", e.Time.Local().Format(time.TimeOnly), e.ID[:8], e.Agent, e.Surface, e.Decision)
					if e.ParentID != "" {
						line += " (execution of " + e.ParentID[:8] + ")"
					}
					if e.Status != "" {
						line += " " + e.Status
					}
					if e.ExitCode != nil {
						line += fmt.Sprintf(" exit %d", *e.ExitCode)
					}
					if e.BlockedBy != "" {
						line += " " + e.BlockedBy
					}
					if e.StatusReason != "" {
						line += " " + e.StatusReason
					}
					fmt.Fprintln(env.Stdout, line)
				}
			}()
		} else if *asJSON {
			writeJSON(env.Stdout, map[string]any{"status": st})
			return nil
		}
		w := env.Stdout
		fmt.Fprintf(w, "service:         running (version %s, pid %d, since %s)\n", st.Version, st.PID, st.Started.Local().Format(time.DateTime))
		fmt.Fprintf(w, "socket:          %s\n", st.Socket)
		files := "embedded defaults only"
		if len(st.Config) > 0 {
			files = strings.Join(st.Config, ", ")
		}
		fmt.Fprintf(w, "configuration:   %s (loaded %s)\n", files, st.ReloadedAt.Local().Format(time.DateTime))
		if st.ReloadError != "" {
			fmt.Fprintf(w, "last reload:     FAILED, previous configuration in force: %s\n", st.ReloadError)
		}
		mode := st.Sandbox.Mode
		if mode == "" {
			mode = "unavailable"
		}
		fmt.Fprintf(w, "sandbox now:     %s (backend %s)\n", mode, st.Sandbox.Backend)
		if st.Sandbox.Error != "" {
			fmt.Fprintf(w, "sandbox problem: %s\n", st.Sandbox.Error)
		}
		p := st.Policy
		fmt.Fprintf(w, "routing:         %s\n", p.Routing)
		fmt.Fprintf(w, "workspace roots: %s; %d in force with the trusted ones (gatehouse workspace list)\n", strings.Join(p.WorkspaceRoots, ", "), st.Workspaces)
		fmt.Fprintf(w, "policy:          sandbox_required=%t analysis=%s default_action=%s timeout=%ds egress=%d entries\n",
			p.SandboxRequired, p.CommandAnalysisMode, p.DefaultAction, p.ExecTimeoutSeconds, len(p.EgressAllowlist))
		fmt.Fprintf(w, "executions:      %d running (max %d), %d tickets pending (max %d, ttl %ds)\n", st.Running, p.MaxConcurrent, st.Pending, p.MaxPendingTickets, p.TicketTTLSeconds)
		fmt.Fprintf(w, "approvals:       %d pending (gatehouse approvals)\n", st.Approvals)
		if wp := st.WarmPool; wp.Size > 0 {
			fmt.Fprintf(w, "warm pool:       %d of %d ready for %s, %s idle\n", wp.Ready, wp.Size, wp.Agent, humanize.IBytes(uint64(wp.IdleRSS)))
		} else {
			fmt.Fprintf(w, "warm pool:       off (exec.sandbox.warm_pool: 0)\n")
		}
		return nil
	}
}
