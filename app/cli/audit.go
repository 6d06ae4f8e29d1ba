package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
)

var auditCmd = &command{name: "audit",
	summary: "read and verify the audit trail (audit list|show|export|verify)",
	usage:   auditUsage,
	// Flags may follow an event ID.
	subs: []*command{
		{name: "audit list", usage: auditUsage, interspersed: true, flags: auditList},
		{name: "audit show", usage: auditUsage, interspersed: true, flags: auditShow},
		{name: "audit export", usage: auditUsage, interspersed: true, flags: auditExport},
		{name: "audit verify", usage: auditUsage, interspersed: true, flags: auditVerify},
	},
}

const auditUsage = `usage:
  gatehouse audit list [--since DUR] [--status S] [--sandbox-mode M] [--agent A] [--grep TEXT] [--limit N] [--json]
  gatehouse audit show ID [--json]
  gatehouse audit export [--format jsonl|otlp-json] [--since DUR] [--status S] [--sandbox-mode M] [--agent A] [--grep TEXT]
  gatehouse audit verify

list prints the newest events first, one line each; show prints one event
(ID or a unique prefix of it) with its stored output; export writes JSON
Lines, oldest first, for a SIEM (--format otlp-json: one OTLP
ExportLogsServiceRequest per line, as the fleet export sends them); verify walks the HMAC chain and names the
first row changed, removed, inserted or reordered.

DUR is a duration (90m, 36h, 7d) or a time (2025-03-01, 2025-03-01T12:00:00Z).`

type auditFilterFlags struct {
	since, status, mode, agent, grep string
}

func (f *auditFilterFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&f.since, "since", "", "")
	fl.StringVar(&f.status, "status", "", "")
	fl.StringVar(&f.mode, "sandbox-mode", "", "")
	fl.StringVar(&f.agent, "agent", "", "")
	fl.StringVar(&f.grep, "grep", "", "")
}

func (f *auditFilterFlags) filter(cmd string, now time.Time) (audit.Filter, error) {
	var out audit.Filter
	if f.since != "" {
		t, err := audit.ParseSince(f.since, now)
		if err != nil {
			return out, usagef("audit %s: --since: %v", cmd, err)
		}
		out.Since = t
	}
	if f.status != "" && !slices.Contains(audit.Statuses, f.status) {
		return out, usagef("audit %s: --status: %q is not one of %s", cmd, f.status, strings.Join(audit.Statuses, ", "))
	}
	if f.mode != "" && !slices.Contains(audit.Modes, f.mode) {
		return out, usagef("audit %s: --sandbox-mode: %q is not one of %s", cmd, f.mode, strings.Join(audit.Modes, ", "))
	}
	out.Status, out.SandboxMode, out.Agent, out.Grep = f.status, f.mode, f.agent, f.grep
	return out, nil
}

func auditList(fl *flag.FlagSet) runFunc {
	var ff auditFilterFlags
	ff.register(fl)
	limit := fl.Int("limit", 50, "")
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("audit list: unexpected argument %q", args[0])
		}
		if *limit < 0 {
			return usagef("audit list: --limit: %d is not allowed; use 0 (all) or more", *limit)
		}
		f, err := ff.filter("list", time.Now())
		if err != nil {
			return err
		}
		f.Limit, f.Calls = *limit, true
		s, err := openAudit(ctx, env)
		if err != nil {
			return err
		}
		var entries []audit.Entry
		if s != nil {
			defer s.Close()
			if entries, err = s.List(ctx, f); err != nil {
				return err
			}
		}
		if *asJSON {
			out := make([]map[string]any, 0, len(entries))
			for i := range entries {
				out = append(out, auditObject(&entries[i]))
			}
			auditJSON(env.Stdout, out)
			return nil
		}
		if len(entries) == 0 {
			return nil
		}
		return auditTable(env.Stdout, entries)
	}
}

// auditTable writes one line per entry, terminal controls escaped.
func auditTable(w io.Writer, entries []audit.Entry) error {
	esc := termesc.NewWriter(w)
	defer esc.Close()
	tw := tabwriter.NewWriter(esc, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tAGENT\tSTATUS\tEXIT\tDURATION\tMODE\tCOMMAND")
	for i := range entries {
		e := &entries[i]
		ev := &e.Event
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			auditShortID(ev.ID), ev.Time.Local().Format("2006-01-02 15:04:05"), auditDash(ev.Agent), audit.StatusText(ev),
			audit.ExitText(ev), audit.DurationText(ev), auditDash(ev.SandboxMode), audit.Shorten(e.Command, 60))
	}
	return tw.Flush()
}

func auditShow(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) != 1 {
			return usagef("audit show: want one event ID; usage: gatehouse audit show ID [--json]")
		}
		s, err := openAudit(ctx, env)
		if err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("no event %s: nothing has been recorded yet", args[0])
		}
		defer s.Close()
		e, err := s.Get(ctx, args[0])
		if err != nil {
			if errors.Is(err, audit.ErrAmbiguous) {
				return withHint(err, "give more digits of the ID")
			}
			return err
		}
		kids, err := s.Children(ctx, e.Event.ID)
		if err != nil {
			return err
		}
		if *asJSON {
			obj := auditObject(e)
			obj["stdout"], obj["stderr"] = auditText(e.Stdout), auditText(e.Stderr)
			var ids []string
			for _, k := range kids {
				ids = append(ids, k.ID)
			}
			obj["children"] = ids
			auditJSON(env.Stdout, obj)
			return nil
		}
		return auditShowText(env.Stdout, e, kids)
	}
}

// auditShowText writes the card of e, terminal controls escaped.
func auditShowText(w io.Writer, e *audit.Entry, kids []api.Event) error {
	esc := termesc.NewWriter(w)
	in := audit.CardInput(e, kids)
	in.CacheSize = toolcache.Size
	auditCard(esc, in)
	return esc.Close()
}

// auditJSON writes v as indented JSON in which terminal controls, bidi
// and invisible characters are \u escapes: the same value, safe to print.
func auditJSON(w io.Writer, v any) {
	var b bytes.Buffer
	writeJSON(&b, v)
	w.Write(termesc.JSON(b.Bytes()))
}

// auditExportBatch is how many events one OTLP JSON line carries.
const auditExportBatch = 256

func auditExport(fl *flag.FlagSet) runFunc {
	var ff auditFilterFlags
	ff.register(fl)
	format := fl.String("format", "jsonl", "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("audit export: unexpected argument %q", args[0])
		}
		if *format != "jsonl" && *format != "otlp-json" {
			return usagef("audit export: --format: %q is not one of jsonl, otlp-json", *format)
		}
		f, err := ff.filter("export", time.Now())
		if err != nil {
			return err
		}
		f.Oldest = true
		s, err := openAudit(ctx, env)
		if err != nil || s == nil {
			return err
		}
		defer s.Close()
		if *format == "otlp-json" {
			return auditExportOTLP(ctx, env, s, f)
		}
		// Each line decodes to the stored values; terminal controls in them are
		// \u escapes, so that the export is safe to print too.
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		return s.Each(ctx, f, func(e *audit.Entry) error {
			line.Reset()
			if err := enc.Encode(auditObject(e)); err != nil {
				return err
			}
			_, err := env.Stdout.Write(termesc.JSON(line.Bytes()))
			return err
		})
	}
}

func auditVerify(fl *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("audit verify: unexpected argument %q", args[0])
		}
		s, err := openAudit(ctx, env)
		if err != nil {
			return err
		}
		if s == nil {
			fmt.Fprintln(env.Stdout, "ok: the audit trail is empty")
			return nil
		}
		defer s.Close()
		rep, err := s.Verify(ctx)
		if err != nil {
			var ke *audit.KeyError
			if errors.As(err, &ke) && ke.Hint != "" {
				return withHint(err, ke.Hint)
			}
			return err
		}
		if p := rep.Problem; p != nil {
			verifyCompleteness(ctx, env, rep)
			return withHint(fmt.Errorf("audit trail broken: %s", p.Detail),
				fmt.Sprintf("%d rows checked in %s; rows before the one named are intact", rep.Rows, s.Path()))
		}
		if rep.Rows == 0 {
			fmt.Fprintln(env.Stdout, "ok: the audit trail is empty")
			return nil
		}
		fmt.Fprintf(env.Stdout, "ok: %d rows verified (rows %d–%d, %d retention checkpoints); the chain is intact\n",
			rep.Rows, rep.FirstSeq, rep.LastSeq, rep.Checkpoints)
		verifyCompleteness(ctx, env, rep)
		return nil
	}
}

// verifyCompleteness says where the key is, which executions the trail
// has not closed, and how many were closed after a crash.
func verifyCompleteness(ctx context.Context, env *Env, rep *audit.Report) {
	w := env.Stdout
	switch rep.KeySource {
	case audit.KeySourceFile:
		fmt.Fprintf(w, "key: file %s (no keychain when the trail began)\n", rep.KeyLocation)
	case audit.KeySourceKeychain:
		fmt.Fprintf(w, "key: keychain item %q\n", rep.KeyLocation)
	}
	if rep.Reconciled > 0 {
		fmt.Fprintf(w, "reconciled: %d executions were closed after the process running them ended abruptly (status_reason %s or %s; 'gatehouse audit list --grep abruptly' lists them)\n",
			rep.Reconciled, audit.ReasonServiceCrashed, audit.ReasonProcessCrashed)
	}
	if len(rep.Open) == 0 {
		fmt.Fprintln(w, "complete: every execution started has its end on the record")
		return
	}
	var serviceUp bool
	if c, err := serviceClient(env); err == nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.Status(sctx)
		cancel()
		serviceUp = err == nil
	}
	fmt.Fprintf(w, "incomplete: %d open executions have no end on the record:\n", len(rep.Open))
	for _, o := range rep.Open {
		var state string
		switch {
		case o.Kind == audit.UnfinishedRouted && serviceUp:
			state = "routed decision; its ticket waits for the relay"
		case o.Kind == audit.UnfinishedRouted:
			state = "routed decision; its ticket is gone with the service: it is recorded never_ran (" + audit.ReasonServiceCrashed + ") when the service next starts"
		case o.Running:
			state = fmt.Sprintf("started; its process (pid %d) is still running", o.PID)
		case o.Service:
			state = fmt.Sprintf("started; the service running it (pid %d) is gone: it is recorded killed (%s) when the service next starts", o.PID, audit.ReasonServiceCrashed)
		default:
			state = fmt.Sprintf("started; the gatehouse process running it (pid %d) is gone: it is recorded killed (%s) when the service next starts", o.PID, audit.ReasonProcessCrashed)
		}
		fmt.Fprintf(w, "  %s  %s  %s  %s: %s\n", auditShortID(o.ID), o.Time.Local().Format("2006-01-02 15:04:05"),
			auditDash(o.Event.Agent), audit.Shorten(o.Command, 40), state)
	}
}

// auditObject is an event as list --json and export write it: the card
// plus the judged command text.
func auditObject(e *audit.Entry) map[string]any {
	b, _ := json.Marshal(e.Event)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["command"] = e.Command
	if e.SandboxReason != "" {
		m["sandbox_reason"] = e.SandboxReason
	}
	return m
}

func auditText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// auditCard writes the card of in (service/card), human-readable. It
// writes the stored text as it is: the caller escapes terminal controls
// (termesc.Writer).
func auditCard(w io.Writer, in card.Input) {
	c := card.Build(in)
	c.WriteText(w, nil, true)
}

func auditShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func auditDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// auditExportOTLP writes the events f selects as OTLP JSON: the records
// the fleet export would send (service/export), one request per line of
// at most auditExportBatch events. It moves no export cursor.
func auditExportOTLP(ctx context.Context, env *Env, s *audit.Store, f audit.Filter) error {
	w, err := export.NewJSONWriter(ctx, termescWriter{env.Stdout}, export.NewEncoder(export.Resource(Version), Version))
	if err != nil {
		return err
	}
	defer w.Close()
	var batch []audit.Entry
	err = s.Each(ctx, f, func(e *audit.Entry) error {
		batch = append(batch, *e)
		if len(batch) < auditExportBatch {
			return nil
		}
		err := w.Write(ctx, batch)
		batch = batch[:0]
		return err
	})
	if err != nil {
		return err
	}
	return w.Write(ctx, batch)
}

// termescWriter writes JSON with terminal controls, bidi and invisible
// characters as \u escapes; each Write must be whole JSON values.
type termescWriter struct{ w io.Writer }

func (t termescWriter) Write(p []byte) (int, error) {
	if _, err := t.w.Write(termesc.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
