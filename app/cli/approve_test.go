package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// approvalScriptCmds are the commands the approval scripts use:
//
//	waitapproval VAR  wait up to 20 s for an approval request the script
//	                  has not seen yet, and set VAR to its id
//	savedrule VAR     set VAR to the name of the one rule in the saved
//	                  rules file
//	httpserver VAR    serve http on the host's loopback (127.0.0.1) until
//	                  the script ends, answering "hello from a service on
//	                  this machine: PATH"; set VAR to its port
func approvalScriptCmds() map[string]func(*testscript.TestScript, bool, []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
		"waitapproval": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: waitapproval VAR")
			}
			c, err := serviceClient(&Env{Getenv: ts.Getenv})
			ts.Check(err)
			seen := ts.Getenv("GATEHOUSE_SEEN_APPROVALS")
			for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
				as, err := c.Approvals(context.Background())
				if err != nil {
					continue
				}
				for _, a := range as {
					if !slices.Contains(strings.Fields(seen), a.ID) {
						ts.Setenv(args[0], a.ID)
						ts.Setenv("GATEHOUSE_SEEN_APPROVALS", seen+" "+a.ID)
						return
					}
				}
			}
			ts.Fatalf("no new approval request within 20 s")
		},
		"httpserver": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: httpserver VAR")
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "hello from a service on this machine: %s\n", r.URL.Path)
			}))
			ts.Defer(srv.Close)
			ts.Setenv(args[0], strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port))
		},
		"savedrule": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: savedrule VAR")
			}
			opts, err := loadOptions(&Env{Getenv: ts.Getenv}, "")
			ts.Check(err)
			rs, err := policy.ReadSavedRules(opts.SavedRulesFile)
			ts.Check(err)
			if len(rs) != 1 {
				ts.Fatalf("%d saved rules, want 1", len(rs))
			}
			if fi, err := os.Stat(opts.SavedRulesFile); err != nil || fi.Mode().Perm() != 0o600 {
				ts.Fatalf("saved rules file: %v %v", fi, err)
			}
			ts.Setenv(args[0], rs[0].Name)
		},
	}
}

// A request's fields are one line each: a command that holds a newline
// (or a bidi control) cannot print a line that looks like another field,
// or reorder what the person reads.
func TestPrintApprovalOneLineFields(t *testing.T) {
	var out strings.Builder
	env := &Env{Stdout: &out}
	printApproval(env, api.Approval{ID: "ab12cd34", Kind: api.ApprovalCommand, Agent: "claude-code", Surface: "agent_hook",
		Command: "git push origin feat\n  in:      /home/u/safe\n  why:     trusted\u202e", Cwd: "/home/u/src/app", Reason: "asked",
		Answers: []string{api.AnswerOnce, api.AnswerDeny}, Expires: time.Now().Add(time.Minute)})
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	var in []string
	for _, l := range lines {
		if strings.HasPrefix(l, "  in:") {
			in = append(in, l)
		}
		if strings.ContainsRune(l, '\u202e') {
			t.Errorf("line %q holds a raw bidi control", l)
		}
	}
	if len(in) != 1 || in[0] != "  in:      /home/u/src/app" {
		t.Errorf("in lines %q:\n%s", in, out.String())
	}
	if !slices.Contains(lines, `  command: git push origin feat\n  in:      /home/u/safe\n  why:     trusted\u202e`) {
		t.Errorf("the command is not one escaped line:\n%s", out.String())
	}
}
