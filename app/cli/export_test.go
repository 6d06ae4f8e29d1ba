package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/export"
	"github.com/gatehouse-dev/gatehouse/service/export/exporttest"
)

// exportScript is one script's OTLP receiver and the events it appended.
type exportScript struct {
	recv *exporttest.Receiver
	ids  []string // the events audit-fill appended, in order
}

// exportScriptCmds are the commands of the fleet export scripts:
//
//	otlp-receiver start          start an OTLP/HTTP receiver on 127.0.0.1
//	                             (exporttest) and set OTLP_ENDPOINT to it
//	otlp-receiver accept|unavailable|down|up
//	                             answer 200, answer 503, close the port,
//	                             listen again
//	otlp-receiver hold-after N   accept N requests, then hold every later
//	                             one unanswered
//	otlp-config FILE BATCH       write a configuration exporting to the
//	                             receiver in batches of BATCH, with no
//	                             sandbox needed, and point GATEHOUSE_CONFIG
//	                             at it
//	audit-fill N                 append N events to the user's trail
//	otlp-wait held|acked N       wait up to 30 s for N held requests, or
//	                             N acknowledged records
//	otlp-report                  print what the receiver got against what
//	                             the trail holds, and the export cursor
func exportScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	var mu sync.Mutex
	state := map[*testscript.TestScript]*exportScript{}
	get := func(ts *testscript.TestScript) *exportScript {
		mu.Lock()
		defer mu.Unlock()
		st := state[ts]
		if st == nil {
			st = &exportScript{}
			state[ts] = st
		}
		return st
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"otlp-receiver": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) == 0 {
				ts.Fatalf("usage: otlp-receiver start|accept|unavailable|down|up|hold-after N")
			}
			st := get(ts)
			if args[0] != "start" && st.recv == nil {
				ts.Fatalf("otlp-receiver start first")
			}
			switch args[0] {
			case "start":
				r, err := exporttest.Start()
				ts.Check(err)
				ts.Defer(r.Close)
				st.recv = r
				ts.Setenv("OTLP_ENDPOINT", r.URL())
			case "accept":
				st.recv.SetMode(exporttest.Accept)
			case "unavailable":
				st.recv.SetMode(exporttest.Unavailable)
			case "down":
				st.recv.Down()
			case "up":
				ts.Check(st.recv.Up())
			case "hold-after":
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				st.recv.HoldAfter(n)
			default:
				ts.Fatalf("otlp-receiver: unknown %q", args[0])
			}
		},
		"otlp-config": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: otlp-config FILE BATCH")
			}
			cfg := fmt.Sprintf(`exec:
  sandbox:
    backend: none
    warm_pool: 0
  audit:
    export:
      otlp:
        endpoint: %s
        batch_size: %s
        retry_initial_backoff_ms: 20
        retry_max_backoff_ms: 200
policy:
  sandbox_required: false
`, ts.Getenv("OTLP_ENDPOINT"), args[1])
			p := ts.MkAbs(args[0])
			ts.Check(os.WriteFile(p, []byte(cfg), 0o600))
			ts.Setenv("GATEHOUSE_CONFIG", p)
		},
		"audit-fill": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: audit-fill N")
			}
			n, err := strconv.Atoi(args[0])
			ts.Check(err)
			st := get(ts)
			env := &Env{Getenv: ts.Getenv}
			s, err := audit.Open(context.Background(), audit.Options{Path: auditPath(env, ts.Getenv("HOME")), Keys: keyStore(env)})
			ts.Check(err)
			defer s.Close()
			for i := range n {
				code := 0
				id := fmt.Sprintf("%032x", len(st.ids)+1)
				ev := api.Event{ID: id, Time: time.Now().UTC(), Agent: "cli", Surface: api.SurfaceCLI,
					ActionType: api.ActionShellExecute, Decision: "allow", Status: "completed", SandboxMode: "none",
					ExitCode: &code, ResolvedCmds: []string{"echo"}, PinnedScripts: []api.Pin{}, Credentials: []string{},
					Egress: api.Egress{DeniedHosts: []string{}}}
				ts.Check(s.Append(context.Background(), audit.Record{Event: ev, Command: fmt.Sprintf("echo %d", i)}))
				st.ids = append(st.ids, id)
			}
		},
		"otlp-wait": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: otlp-wait held|acked N")
			}
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			st := get(ts)
			cond := func(r *exporttest.Receiver) bool { return r.Held() >= n }
			if args[0] == "acked" {
				cond = func(r *exporttest.Receiver) bool { return len(r.Acked()) >= n }
			}
			if err := st.recv.WaitFor(30*time.Second, cond); err != nil {
				ts.Fatalf("%v: %d held, %d acknowledged", err, st.recv.Held(), len(st.recv.Acked()))
			}
		},
		"otlp-report": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 0 {
				ts.Fatalf("usage: otlp-report")
			}
			st := get(ts)
			fmt.Fprint(ts.Stdout(), receiverReport(st.ids, st.recv))
			env := &Env{Getenv: ts.Getenv}
			s, err := audit.Open(context.Background(), audit.Options{Path: auditPath(env, ts.Getenv("HOME")), Keys: keyStore(env)})
			ts.Check(err)
			defer s.Close()
			c, err := s.ExportCursor(context.Background(), export.CursorName)
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "cursor: row %d\n", c)
		},
	}
}

// receiverReport compares what the receiver got with the events the trail
// holds (want, in order):
//
//	acked: N of M, in order, each once   (or what is wrong)
//	received twice: K (events A–B)
//	never received: L
func receiverReport(want []string, r *exporttest.Receiver) string {
	var b strings.Builder
	acked := exporttest.IDs(r.Acked())
	switch {
	case slices.Equal(acked, want[:min(len(acked), len(want))]) && len(acked) == len(want):
		fmt.Fprintf(&b, "acked: %d of %d, in order, each once\n", len(acked), len(want))
	case len(acked) <= len(want) && slices.Equal(acked, want[:len(acked)]):
		fmt.Fprintf(&b, "acked: %d of %d\n", len(acked), len(want))
	default:
		fmt.Fprintf(&b, "acked: %d of %d, not the trail's order: %v\n", len(acked), len(want), acked)
	}
	count := map[string]int{}
	for _, q := range r.Requests() {
		for _, id := range exporttest.IDs(q.Records) {
			count[id]++
		}
	}
	var twice []int
	never := 0
	for i, id := range want {
		switch c := count[id]; {
		case c == 0:
			never++
		case c == 2:
			twice = append(twice, i+1)
		case c > 2:
			fmt.Fprintf(&b, "received %d times: event %d\n", c, i+1)
		}
	}
	if len(twice) == 0 {
		b.WriteString("received twice: 0\n")
	} else {
		contiguous := twice[len(twice)-1]-twice[0]+1 == len(twice)
		fmt.Fprintf(&b, "received twice: %d (events %d–%d, contiguous %t)\n", len(twice), twice[0], twice[len(twice)-1], contiguous)
	}
	fmt.Fprintf(&b, "never received: %d\n", never)
	return b.String()
}
