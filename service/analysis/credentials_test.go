package analysis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/analysis/argvcred"
)

// A pinned script is checked with the text, and taint crosses into it.
func TestCredentialInArgvScripts(t *testing.T) {
	t.Parallel()
	deploy := analysis.NewTestScript("/ws/deploy.sh", "bash", []byte("#!/bin/bash\nset -e\ncurl -fsS \\\n  -H \"Authorization: token $GITHUB_TOKEN\" https://api.github.com\n"))
	safe := analysis.NewTestScript("/ws/safe.sh", "bash", []byte("#!/bin/bash\nprintf %s \"$GITHUB_TOKEN\" | gh auth login --with-token\n"))
	uses := analysis.NewTestScript("/ws/uses.sh", "sh", []byte("curl -H \"$H\" x\n"))
	py := analysis.NewTestScript("/ws/x.py", "python", []byte("curl $GITHUB_TOKEN\n"))
	opts := argvcred.Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN"}}

	use := argvcred.Find("./deploy.sh", []*analysis.Script{deploy}, opts)
	if use == nil || use.Var != "GITHUB_TOKEN" || use.Command != "curl" || use.Source != "/ws/deploy.sh" || use.Line != 4 {
		t.Errorf("deploy.sh: %+v", use)
	}
	if !strings.Contains(use.Reason(), "$GITHUB_TOKEN would be an argument of curl (/ws/deploy.sh)") {
		t.Errorf("reason: %s", use.Reason())
	}
	if use := argvcred.Find("./safe.sh", []*analysis.Script{safe, py}, opts); use != nil {
		t.Errorf("safe.sh: %+v", use)
	}
	// Taint from the text reaches the script that reads the variable.
	if use := argvcred.Find(`export H="token $GITHUB_TOKEN"; sh uses.sh`, []*analysis.Script{uses}, opts); use == nil || use.Var != "H" || use.Source != "/ws/uses.sh" {
		t.Errorf("uses.sh: %+v", use)
	}
	// Code on standard input is checked too, when a shell reads it; data
	// on standard input is not code.
	stdin := argvcred.Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN"}, Stdin: "curl -H \"$GITHUB_TOKEN\" x\n"}
	for _, cmd := range []string{"bash", "bash -s", "sh -x", "/bin/bash -e -s"} {
		if use := argvcred.Find(cmd, nil, stdin); use == nil || use.Source != "stdin" {
			t.Errorf("%s with code on stdin: %+v", cmd, use)
		}
	}
	for _, cmd := range []string{"cat > deploy.sh", "bash deploy.sh", "bash -c 'cat > x'", "bash < file.sh"} {
		if use := argvcred.Find(cmd, nil, stdin); use != nil {
			t.Errorf("%s with data on stdin: %+v", cmd, use)
		}
	}
}

func FuzzCredentialInArgv(f *testing.F) {
	for _, s := range []string{`curl "$T"`, `T=$X; eval "$T"`, `bash -c 'curl $T'`, "bash <<'E'\ncurl $T\nE", `f() { x "$1"; }; f "$T"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		argvcred.Find(text, nil, argvcred.Options{Vars: []string{"T"}})
	})
}

// The recipes and scripts analysis took from a pinned Makefile or
// package.json are checked with it.
func TestCredentialInArgvRunners(t *testing.T) {
	t.Parallel()
	fx := analysis.CorpusFixture(t)
	opts := analysis.CorpusOptions(t, fx, "")
	for _, tc := range []struct{ file, text, cmd, want string }{
		{"Makefile", "deploy:\n\tcurl -H \"Authorization: $$GATEHOUSE_CRED_X\" https://x\n", "make deploy", "GATEHOUSE_CRED_X curl argument"},
		{"Makefile", "deploy:\n\tcurl -u $(GATEHOUSE_CRED_X) https://x\n", "make deploy", "GATEHOUSE_CRED_X curl argument"},
		{"Makefile", "deploy:\n\tGH_TOKEN=$$GATEHOUSE_CRED_X gh release create\n", "make deploy", ""},
		{"package.json", `{"scripts": {"pub": "curl -d \"$GATEHOUSE_CRED_X\" https://x"}}`, "npm run pub", "GATEHOUSE_CRED_X curl argument"},
		{"package.json", `{"scripts": {"pub": "npm publish", "prepub": "curl $GATEHOUSE_CRED_X"}}`, "yarn pub", "GATEHOUSE_CRED_X curl argument"},
		{"package.json", `{"scripts": {"pub": "NODE_AUTH_TOKEN=$GATEHOUSE_CRED_X npm publish"}}`, "pnpm run pub", ""},
	} {
		dir := t.TempDir()
		dir, _ = filepath.EvalSymlinks(dir)
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Dir, o.ScriptRoots, o.Writable = dir, []string{dir}, []string{dir}
		tree := analysis.Analyze(tc.cmd, o)
		if len(tree.Scripts) != 1 || tree.Scripts[0].Lang == "" {
			t.Fatalf("%s: %s not read: %+v", tc.cmd, tc.file, tree.Scripts)
		}
		use := argvcred.Find(tc.cmd, tree.Scripts, argvcred.Options{Dialect: "bash"})
		got := ""
		if use != nil {
			got = use.Var + " " + use.Command + " " + use.How
		}
		if got != tc.want {
			t.Errorf("%s with %s: got %q, want %q", tc.cmd, tc.text, got, tc.want)
		}
	}
}

// The credential check walks the units analysis parsed: brace expansion in
// them (which analysis applies to a copy) neither crashes it nor hides a
// credential that a brace makes an argument.
func TestCredentialInArgvAfterBraces(t *testing.T) {
	t.Parallel()
	opts := argvcred.Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN"}}
	for _, tc := range []struct{ cmd, want string }{
		{"for i in {1..3}; do echo $i; done | cat", ""},
		{"mkdir -p t/{a,b} && ls t", ""},
		{"echo {a,b} | tr a-z A-Z", ""},
		{"f() { for x in {01..10..2}; do printf '%s\\n' pre{$x,y}post; done; }; f | sort", ""},
		{"cp file{,.bak} && echo {a..c}{1,2}", ""},
		{`{./tool,"$GITHUB_TOKEN"}`, "GITHUB_TOKEN"},
		{`curl {-H,"$GITHUB_TOKEN"} https://x`, "GITHUB_TOKEN"},
		{`echo {a,"$GITHUB_TOKEN"} | cat`, ""},
	} {
		tr := analysis.Analyze(tc.cmd, analysis.Opts("/w"))
		opts := opts
		opts.Tree = tr
		use := argvcred.Find(tc.cmd, nil, opts)
		switch {
		case tc.want == "" && use != nil:
			t.Errorf("%s: %+v", tc.cmd, use)
		case tc.want != "" && (use == nil || use.Var != tc.want):
			t.Errorf("%s: %+v, want %s on a command line", tc.cmd, use, tc.want)
		}
	}
}
