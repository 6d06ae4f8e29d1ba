package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// gatehouseLines returns the lines of stderr Gatehouse added: those from
// the first "gatehouse: " line on, which must come after everything the
// command wrote.
func gatehouseLines(t *testing.T, stderr string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if strings.HasPrefix(l, "gatehouse: ") {
			out = append(out, strings.TrimSuffix(l, "\n"))
		} else if len(out) > 0 && l != "" {
			t.Errorf("the command's own output %q comes after Gatehouse's lines:\n%s", l, stderr)
		}
	}
	return out
}

// A command the sandbox or the proxy refused something ends its stderr
// with a Gatehouse line per refusal, naming what and why: the agent reads
// why, not only curl's 403 or "No such file or directory". A command
// refused nothing gets none, and neither does one that only names a
// hidden path and succeeds.
func TestRefusalLinesExplainWhatWasRefused(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	f.write("home/.ssh/id_rsa", "KEY\n")
	f.hostGit(f.ws, "init", "-q")
	cases := []struct {
		cmd  string
		want []string
	}{
		{`curl -sS --noproxy '' http://unlisted.example/`, []string{
			"gatehouse: egress to unlisted.example:80 refused (not in policy.egress_allowlist)"}},
		{`cat ~/.ssh/id_rsa`, []string{"gatehouse: ~/.ssh is hidden from commands (deny-read)"}},
		{`echo '[x]' >> .git/config`, []string{"gatehouse: .git/config is read-only here (write-deny)"}},
		{`cat ~/.ssh/id_rsa; curl -sS --noproxy '' http://a.example/; curl -sS --noproxy '' http://b.example/; cat ~/.aws/credentials; echo x > .git/config`, []string{
			"gatehouse: egress to a.example:80 refused (not in policy.egress_allowlist)",
			"gatehouse: egress to b.example:80 refused (not in policy.egress_allowlist)",
			"gatehouse: ~/.ssh is hidden from commands (deny-read)",
			"gatehouse: and 2 more refusals (gatehouse audit show has them)"}},
		{`echo ok; ls -a; echo oops >&2`, nil},
		{`echo ~/.ssh/id_rsa`, nil},
		{`ls ~/.ssh || true`, nil},
		{`false`, nil},
	}
	for _, c := range cases {
		o := f.run(c.cmd)
		got := gatehouseLines(t, o.Result.Stderr)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: Gatehouse's lines\n  %q\nwant\n  %q\nstderr: %s", c.cmd, got, c.want, o.Result.Stderr)
		}
	}
	// The record keeps the command's own output; the lines are the
	// caller's.
	o := f.run(`cat ~/.ssh/id_rsa`)
	if strings.Contains(string(o.KeptStderr), "gatehouse:") {
		t.Errorf("the audit's copy of stderr has Gatehouse's lines: %q", o.KeptStderr)
	}
}

// A hook made where writing is denied is moved aside, and the line says
// where to.
func TestRefusalLinesNameWhatWasMovedAside(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	f.hostGit(f.ws, "init", "-q")
	// .git/hooks is bound read-only when it exists; a repository without
	// one gets the directory made and moved aside.
	os.RemoveAll(filepath.Join(f.ws, ".git", "hooks"))
	o := f.run(`mkdir .git/hooks && echo 'echo pwned' > .git/hooks/pre-commit`)
	got := gatehouseLines(t, o.Result.Stderr)
	if len(o.Event.WriteBlocked) == 0 {
		t.Skipf("nothing was moved aside (%q); the sandbox refused the write instead: %s", got, o.Result.Stderr)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "gatehouse: .git/hooks may not be written here (write-deny); what the command made there was moved aside to .git/hooks.gatehouse-blocked-") {
		t.Errorf("lines %q; stderr %s", got, o.Result.Stderr)
	}
}

// exec.output.explain_refusals: false leaves stderr as the command wrote it.
func TestRefusalLinesOff(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Output.ExplainRefusals = false })
	f.write("home/.ssh/id_rsa", "KEY\n")
	o := f.run(`cat ~/.ssh/id_rsa; curl -sS --noproxy '' http://unlisted.example/`)
	if strings.Contains(o.Result.Stderr, "gatehouse:") {
		t.Errorf("stderr has Gatehouse's lines with explain_refusals off: %s", o.Result.Stderr)
	}
	if len(o.Event.Egress.DeniedHosts) != 1 {
		t.Errorf("the record lost the refusal: %+v", o.Event.Egress)
	}
}
