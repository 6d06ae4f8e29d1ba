package workflow

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// The developer workflow suite: the same scripted sessions, in copies of
// small real projects, through plain bash and through gatehouse exec. The
// exit status and the stdout of every step must be the same on both sides
// once paths, durations and temporary names are normalised, except for the
// differences listed here (and in docs/workflow.md), each of which the
// sandbox's policy is there to make.

// difference is a step whose result under gatehouse exec is meant to differ
// from plain bash's: exec's exit status and normalised stdout are given, and
// the reason.
type difference struct {
	session, step string
	code          int
	stdout        string
	reason        string
}

var differences = []difference{
	{
		session: "git", step: "config-existing-repo",
		code:   0,
		stdout: "config: refused\nuser.name=Test User\n",
		reason: ".git/config of a repository that existed when the command started is write-denied (a repository's configuration can run programs on the host: core.hooksPath, core.fsmonitor, …)",
	},
	{
		session: "text", step: "write-outside-workspace",
		code:   1,
		stdout: "",
		reason: "writes outside the workspace roots are refused: the home directory is read-only inside the sandbox",
	},
}

func expected(session, step string) *difference {
	for i := range differences {
		if d := &differences[i]; d.session == session && d.step == step {
			return d
		}
	}
	return nil
}

// step is one command an agent would issue: script runs with bash in dir
// (relative to the project copy). code is the exit status plain bash must
// return and want the lines its stdout must contain, so that a session
// that silently does nothing cannot pass.
type step struct {
	name   string
	dir    string
	script string
	code   int
	want   []string
}

type session struct {
	name    string
	project string // testdata/projects/NAME
	steps   []step
}

// runSession runs each step on plain bash and then on gatehouse exec, in
// separate copies of the project, and compares them.
func runSession(t *testing.T, path string, s session) {
	t.Helper()
	bash, gh := newSides(t, path)
	dirs := map[*side]string{bash: bash.copyProject(t, s.project), gh: gh.copyProject(t, s.project)}
	seen := map[string]bool{}
	for _, st := range s.steps {
		seen[st.name] = true
		var res [2]result
		var norm [2]string
		for i, sd := range []*side{bash, gh} {
			res[i] = sd.run(t, filepath.Join(dirs[sd], st.dir), st.script)
			norm[i] = sd.normalise(res[i].stdout)
		}
		show := func() string {
			return fmt.Sprintf("bash: exit %d\n--- stdout\n%s--- stderr\n%s\nexec: exit %d\n--- stdout\n%s--- stderr\n%s",
				res[0].code, norm[0], res[0].stderr, res[1].code, norm[1], res[1].stderr)
		}
		if res[0].code != st.code {
			t.Fatalf("%s: plain bash exits %d, want %d (the session itself is broken)\n%s", st.name, res[0].code, st.code, show())
		}
		for _, w := range st.want {
			if !strings.Contains(norm[0], w) {
				t.Fatalf("%s: plain bash's stdout lacks %q (the session itself is broken)\n%s", st.name, w, show())
			}
		}
		t.Logf("%s: bash exit %d, exec exit %d; bash stdout:\n%s", st.name, res[0].code, res[1].code, norm[0])
		if d := expected(s.name, st.name); d != nil {
			if res[1].code == res[0].code && norm[1] == norm[0] {
				t.Fatalf("%s: listed as a difference (%s) but gatehouse exec now gives what plain bash gives; remove it from the list and docs/workflow.md\n%s", st.name, d.reason, show())
			}
			if res[1].code != d.code || norm[1] != d.stdout {
				t.Fatalf("%s: gatehouse exec differs from plain bash otherwise than listed (%s): want exit %d, stdout %q\n%s", st.name, d.reason, d.code, d.stdout, show())
			}
			continue
		}
		if res[1].code != res[0].code || norm[1] != norm[0] {
			t.Fatalf("%s: gatehouse exec differs from plain bash, and the difference is not listed\n%s", st.name, show())
		}
		for _, w := range st.want { // implied by the equality; said outright
			if !strings.Contains(norm[1], w) {
				t.Fatalf("%s: gatehouse exec's stdout lacks %q\n%s", st.name, w, show())
			}
		}
	}
	for _, d := range differences {
		if d.session == s.name && !seen[d.step] {
			t.Errorf("difference %s/%s is listed but no such step runs", d.session, d.step)
		}
	}
}

func TestWorkflow(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	path := sessionPath()

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		_, ok := lookPath("go", path)
		need(t, ok, "go", "golang (or Go from go.dev in /usr/local/go)")
		const script = `export GOTOOLCHAIN=local GOFLAGS= GOPROXY=off
go build ./... && go test ./... && go vet ./... && go run . gopher`
		runSession(t, path, session{name: "go", project: "go", steps: []step{
			{name: "first", dir: "app", script: script, want: []string{
				"ok  \texample.com/app\t<T>\n",
				"ok  \texample.com/app/internal/shout\t<T>\n",
				"hello, gopher\n",
			}},
			{name: "second", dir: "app", script: script, want: []string{
				"ok  \texample.com/app\t(cached)\n",
				"ok  \texample.com/app/internal/shout\t(cached)\n",
				"hello, gopher\n",
			}},
		}})
	})

	t.Run("python", func(t *testing.T) {
		t.Parallel()
		need(t, runs(path, "/usr/bin/python3", "-c", "import ensurepip"), "python3's venv module", "python3-venv")
		need(t, runs(path, "/usr/bin/python3", "-m", "pip", "--version"), "pip for /usr/bin/python3", "python3-pip")
		need(t, runs(path, "/usr/bin/python3", "-c", "import setuptools"), "setuptools for /usr/bin/python3", "python3-setuptools")
		need(t, runs(path, "/usr/bin/python3", "-c", "import wheel"), "wheel for /usr/bin/python3", "python3-wheel")
		need(t, runs(path, "/usr/bin/python3", "-c", "import pytest"), "pytest for /usr/bin/python3", "python3-pytest")
		const pipEnv = "export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1\n"
		runSession(t, path, session{name: "python", project: "python", steps: []step{
			{name: "wheel", script: pipEnv + `/usr/bin/python3 -m pip wheel -q --no-deps --no-build-isolation -w wheels ./dep && ls wheels`,
				want: []string{"tinydep-1.0-py3-none-any.whl\n"}},
			{name: "venv", dir: "proj", script: `/usr/bin/python3 -m venv --system-site-packages .venv && .venv/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'`,
				want: []string{"True\n"}},
			{name: "install", dir: "proj", script: pipEnv + `.venv/bin/pip install --no-index --find-links ../wheels --no-build-isolation -e . && .venv/bin/python -c 'import wordy, tinydep; print(wordy.doubled_count("a b c"))'`,
				want: []string{"Successfully installed tinydep-1.0 wordy-0.1\n", "6\n"}},
			{name: "pytest", dir: "proj", script: `.venv/bin/python -m pytest -q`,
				want: []string{"2 passed"}},
		}})
	})

	t.Run("node", func(t *testing.T) {
		t.Parallel()
		_, okNode := lookPath("node", path)
		need(t, okNode, "node", "nodejs")
		_, okNpm := lookPath("npm", path)
		need(t, okNpm, "npm", "npm")
		const npmEnv = "export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false\n"
		runSession(t, path, session{name: "node", project: "node", steps: []step{
			{name: "pack", dir: "dep", script: npmEnv + `npm pack --pack-destination .. && ls ..`,
				want: []string{"dep-1.0.0.tgz\n"}},
			{name: "lock", dir: "app", script: npmEnv + `npm install --offline --package-lock-only --no-audit --no-fund && grep -c '"resolved": "file:../dep-1.0.0.tgz"' package-lock.json`,
				want: []string{"1\n"}},
			{name: "ci", dir: "app", script: npmEnv + `npm ci --offline --no-audit --no-fund && ls node_modules/dep`,
				want: []string{"added 1 package", "index.js\n"}},
			{name: "test", dir: "app", script: npmEnv + `npm test`,
				want: []string{"add: ok\n"}},
		}})
	})

	t.Run("rust", func(t *testing.T) {
		t.Parallel()
		bin, ok := cargoDir()
		if !ok {
			t.Skip("cargo is not on PATH: the rust session does not run")
		}
		runSession(t, bin+":"+path, session{name: "rust", project: "rust", steps: []step{
			{name: "build", script: `cargo build --offline && ./target/debug/hello`,
				want: []string{"hello from hello\n"}},
			{name: "rebuild", script: `cargo build --offline && ls target/debug/hello`,
				want: []string{"target/debug/hello\n"}},
		}})
	})

	t.Run("make", func(t *testing.T) {
		t.Parallel()
		_, ok := lookPath("make", path)
		need(t, ok, "make", "make")
		runSession(t, path, session{name: "make", project: "make", steps: []step{
			{name: "build", script: `make && cat out.txt`,
				want: []string{"tr a-z A-Z < in.txt > out.txt\n", "MAKE BUILDS THIS\n"}},
			{name: "up-to-date", script: `make`,
				want: []string{"make: 'out.txt' is up to date.\n"}},
			{name: "rebuild", script: `touch in.txt && make && make clean && ls`,
				want: []string{"tr a-z A-Z < in.txt > out.txt\n", "rm -f out.txt\n", "Makefile\nin.txt\n"}},
		}})
	})

	t.Run("git", func(t *testing.T) {
		t.Parallel()
		_, ok := lookPath("git", path)
		need(t, ok, "git", "git")
		// Fixed dates and identity: the same commits on both sides.
		const gitEnv = `export GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z' GIT_CONFIG_NOSYSTEM=1
`
		runSession(t, path, session{name: "git", project: "git", steps: []step{
			{name: "init", script: gitEnv + `git init -q -b main . &&
git config user.name 'Test User' && git config user.email test@example.com &&
git add . && git commit -q -m 'first' && git log --oneline`,
				want: []string{" first\n"}},
			{name: "branch", script: gitEnv + `git branch feature && git checkout -q feature &&
echo 'line 2' >> notes.txt && git diff && git commit -q -am 'second' &&
git checkout -q main && git log --oneline --all && git branch --list`,
				want: []string{"+line 2\n", " second\n", "  feature\n* main\n"}},
			{name: "stash", script: gitEnv + `echo draft >> README.md && git stash -q && git status --short && cat README.md &&
git stash pop -q && git status --short && git stash list | wc -l`,
				want: []string{"# demo\n M README.md\n0\n"}},
			{name: "worktree", script: gitEnv + `git worktree add -q wt-feature feature && cat wt-feature/notes.txt &&
git -C wt-feature log --oneline -1 && git worktree list --porcelain | grep -c '^worktree '`,
				want: []string{"line 1\nline 2\n", " second\n", "2\n"}},
			{name: "config-existing-repo", script: gitEnv + `if git config user.name 'Other User' 2>/dev/null; then echo config: changed; else echo config: refused; fi
echo "user.name=$(git config user.name)"`,
				want: []string{"config: changed\n", "user.name=Other User\n"}},
		}})
	})

	t.Run("text", func(t *testing.T) {
		t.Parallel()
		runSession(t, path, session{name: "text", project: "text", steps: []step{
			{name: "search", script: `grep -rn TODO docs | sort && find . -name '*.txt' | sort && find docs -type f -print0 | sort -z | xargs -0 wc -l`,
				want: []string{"docs/a.txt:2:gamma TODO delta\n", "./fruit.txt\n", "4 total\n"}},
			{name: "transform", script: `sort fruit.txt | uniq -c | sort -rn | awk '{print $2 "=" $1}' &&
sed -e 's/banana/BANANA/g' fruit.txt > fruit2.txt && grep -c BANANA fruit2.txt && wc -l < fruit2.txt`,
				want: []string{"apple=3\nbanana=2\ncherry=1\n", "2\n6\n"}},
			{name: "archive", script: `tar czf docs.tar.gz docs && tar tzf docs.tar.gz | sort &&
gzip -k fruit.txt && gzip -dc fruit.txt.gz | cmp - fruit.txt && echo same &&
mkdir -p unpacked && tar xzf docs.tar.gz -C unpacked && diff -r docs unpacked/docs && echo unpacked`,
				want: []string{"docs/\ndocs/a.txt\ndocs/b.txt\n", "same\n", "unpacked\n"}},
			{name: "diff", script: `diff -u old.txt new.txt > d.patch; echo "diff: $?"; tail -n +3 d.patch`,
				want: []string{"diff: 1\n", "-two\n+2\n", "+four\n"}},
			{name: "write-outside-workspace", script: `sort fruit.txt > "$HOME/sorted.txt" && head -1 "$HOME/sorted.txt"`,
				want: []string{"apple\n"}},
		}})
	})
}

// cargoDir returns the directory of the cargo (and rustc) the user running
// the tests has on PATH. A rustup proxy is resolved to its toolchain's bin
// directory: the sessions run with a private HOME, where rustup would find
// no toolchain.
func cargoDir() (string, bool) {
	p, err := exec.LookPath("cargo")
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(p); err == nil && filepath.Base(real) == "rustup" {
		out, err := exec.Command("rustup", "which", "cargo").Output()
		if err != nil {
			return "", false
		}
		p = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return filepath.Dir(p), true
}

// docs/workflow.md lists the same differences, with the same reasons.
func TestDifferencesDocumented(t *testing.T) {
	p := filepath.Join("..", "..", "..", "docs", "workflow.md")
	doc, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("%s is not beside this copy of the package; the run from the checkout covers it", p)
	}
	_, table, _ := strings.Cut(string(doc), "## Expected differences")
	table, _, _ = strings.Cut(table, "\n## ")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows++
		}
	}
	if rows != len(differences) {
		t.Errorf("docs/workflow.md lists %d differences, the test %d", rows, len(differences))
	}
	for _, d := range differences {
		row := "| `" + d.session + "/" + d.step + "` |"
		i := strings.Index(table, row)
		if i < 0 {
			t.Errorf("docs/workflow.md does not list %s/%s", d.session, d.step)
			continue
		}
		line, _, _ := strings.Cut(table[i:], "\n")
		if !strings.HasSuffix(line, "| "+d.reason+" |") {
			t.Errorf("docs/workflow.md gives %s/%s another reason than the test's %q:\n%s", d.session, d.step, d.reason, line)
		}
	}
}
