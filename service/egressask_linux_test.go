package service

// Egress approvals end to end through a running service: a command's
// connection to a name no allowlist entry covers is held, the caller is
// told it waits (gatehouse exec's stderr, the relay's stderr), a person
// answers through the local API as `gatehouse approve` does, and the
// body arrives; a session answer covers the session's next command and no
// other session's; always saves the entry in the saved rules file, which
// a fresh service loads; deny refuses with the Gatehouse line.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// answerNext waits for the next pending request and answers it.
func (f *fixture) answerNext(answer string) (api.Approval, *api.AnswerResponse) {
	f.t.Helper()
	for range 3000 {
		as, err := f.c.Approvals(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		if len(as) > 0 {
			resp, err := f.c.Answer(context.Background(), api.AnswerRequest{ID: as[0].ID, Answer: answer, By: api.ByCLI})
			if err != nil || !resp.OK {
				f.t.Fatalf("answer %s: %+v %v", as[0].ID, resp, err)
			}
			return as[0], resp
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatal("no approval request came")
	return api.Approval{}, nil
}

func TestEgressApprovalThroughService(t *testing.T) {
	names := map[string]string{"unknown.test": "127.0.0.1", "other.test": "127.0.0.1"}
	saved := filepath.Join(t.TempDir(), policy.SavedRulesName)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", r.URL.Path)
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	f := askService(t, saved, names)

	var resp *api.AnswerResponse // the last answer's
	exec := func(session, path string, answer string) (end *api.End, stdout, stderr string, a api.Approval) {
		var out, errb bytes.Buffer
		done := make(chan struct{})
		go func() {
			defer close(done)
			var err error
			end, err = f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
				Command: "curl -sS --noproxy '' http://" + path, Agent: "claude-code", Surface: api.SurfaceCLI, SessionID: session, Cwd: f.ws,
				Interactive: true, // a person waits at the terminal
			}}, &out, &errb)
			if err != nil {
				t.Error(err)
			}
		}()
		if answer != "" {
			a, resp = f.answerNext(answer)
		}
		<-done
		return end, out.String(), errb.String(), a
	}

	// Nobody at a terminal and nobody following the service (no tray, no
	// dashboard): nobody would see the question, so the destination is
	// refused at once, as under deny, and nothing is asked.
	var o0, e0 bytes.Buffer
	end0, err0 := f.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
		Command: "curl -sS --noproxy '' http://unknown.test:" + port + "/unwatched", Agent: "claude-code", Surface: api.SurfaceAgentHook, Cwd: f.ws,
	}}, &o0, &e0)
	if err0 != nil || strings.Contains(o0.String(), "hello") || !strings.Contains(e0.String(), "gatehouse: egress to unknown.test:"+port+" refused") {
		t.Fatalf("unwatched: %v, stdout %q, stderr %q", err0, o0.String(), e0.String())
	}
	if as, _ := f.c.Approvals(context.Background()); len(as) != 0 || len(end0.Event.Egress.Approved) != 0 {
		t.Errorf("unwatched: asked anyway: %+v %+v", as, end0.Event.Egress.Approved)
	}

	// Once: held, told, approved, the body arrives.
	end, out, errOut, a := exec("s1", "unknown.test:"+port+"/once", api.AnswerOnce)
	if out != "hello /once\n" || end.Exit != 0 {
		t.Fatalf("once: exit %d, stdout %q, stderr %q", end.Exit, out, errOut)
	}
	if a.Kind != api.ApprovalEgress || a.Host != "unknown.test" || !strings.Contains(errOut, "gatehouse: waiting up to ") || !strings.Contains(errOut, "approval "+a.ID+": unknown.test:"+port+", not on the egress allowlist") {
		t.Errorf("request %+v, stderr %q", a, errOut)
	}
	if ap := end.Event.Egress.Approved; len(ap) != 1 || ap[0].Answer != api.AnswerOnce || ap[0].By != api.ByCLI {
		t.Errorf("egress.approved %+v", ap)
	}
	// Session: this session's next command goes through without asking
	// (it would wait 60 s for an answer nobody gives); another session's
	// is asked, and denied, with the Gatehouse line.
	exec("s1", "unknown.test:"+port+"/session", api.AnswerSession)
	end, out, _, _ = exec("s1", "unknown.test:"+port+"/again", "")
	if out != "hello /again\n" || end.Event.Egress.Approved[0].By != "session" {
		t.Errorf("same session: %q %+v", out, end.Event.Egress.Approved)
	}
	_, out, errOut, _ = exec("s2", "unknown.test:"+port+"/other", api.AnswerDeny)
	if strings.Contains(out, "hello") || !strings.Contains(errOut, "gatehouse: egress to unknown.test:"+port+" refused") {
		t.Errorf("other session: stdout %q, stderr %q", out, errOut)
	}
	// Always: the entry is saved, reported with its file, in force at once
	// and in a fresh service.
	_, out, _, _ = exec("s3", "other.test:"+port+"/always", api.AnswerAlways)
	if out != "hello /always\n" || resp == nil || resp.SavedEntry != "other.test:"+port || resp.SavedFile != saved {
		t.Fatalf("always: %q %+v", out, resp)
	}
	if b, _ := os.ReadFile(saved); !strings.Contains(string(b), "other.test:"+port) {
		t.Errorf("saved file:\n%s", b)
	}
	end, out, _, _ = exec("s4", "other.test:"+port+"/saved", "")
	if out != "hello /saved\n" || len(end.Event.Egress.Approved) != 0 {
		t.Errorf("after always: %q %+v", out, end.Event.Egress.Approved)
	}
	f.shutdown()
	g := askService(t, saved, names)
	var o2, e2 bytes.Buffer
	end, err := g.c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
		Command: "curl -sS --noproxy '' http://other.test:" + port + "/fresh", Agent: "cli", Surface: api.SurfaceCLI, Cwd: g.ws,
	}}, &o2, &e2)
	if err != nil || o2.String() != "hello /fresh\n" || len(end.Event.Egress.Approved) != 0 {
		t.Errorf("fresh service: %v %q %q", err, o2.String(), e2.String())
	}

	// The relay's stderr carries the waiting line too. A routed call has
	// no terminal of its own: it is asked about because a tray follows
	// the service.
	tray, stopTray := context.WithCancel(context.Background())
	defer stopTray()
	following := make(chan struct{}, 1)
	go g.c.Stream(tray, func(api.StreamNotice) {
		select {
		case following <- struct{}{}:
		default:
		}
	})
	<-following
	r := g.decide("curl -sS --noproxy '' http://unknown.test:" + port + "/relay")
	type relayed struct {
		code        int
		out, errOut string
	}
	ch := make(chan relayed, 1)
	go func() {
		c, o, e := g.runRelay(r.Ticket)
		ch <- relayed{c, o, e}
	}()
	a, _ = g.answerNext(api.AnswerOnce)
	rr := <-ch
	if rr.out != "hello /relay\n" || !strings.Contains(rr.errOut, "approval "+a.ID) {
		t.Errorf("relay: %d %q %q", rr.code, rr.out, rr.errOut)
	}
}

// askService starts a service whose executors resolve names (to
// loopback), with its saved rules in saved.
func askService(t *testing.T, saved string, names map[string]string) *fixture {
	t.Helper()
	return startExec(t, nil, func(o *Options) {
		o.SavedRulesFile = saved
		load, newEx := o.Load, o.NewExecutor
		o.Load = func() (*policy.Loaded, error) {
			l, err := load()
			if err != nil {
				return nil, err
			}
			ws := l.Config.Exec.DefaultCWD
			if l, err = policy.Load(policy.LoadOptions{Home: filepath.Dir(ws), SavedRulesFile: saved}); err != nil {
				return nil, err
			}
			l.Config.Exec.DefaultCWD = ws
			return l, nil
		}
		o.NewExecutor = func(cfg *policy.Config) (*pipeline.Executor, error) {
			ex, err := newEx(cfg)
			if err == nil {
				ex.TestOnlyEgressNames(names)
			}
			return ex, err
		}
	}, nil)
}
