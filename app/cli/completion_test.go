package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/version"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// shell returns the path of a shell the completion tests run, skipping
// when it is missing (failing under REQUIRE_SANDBOX=1: .ci/test-deps.sh
// installs bash, zsh and fish).
func shell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if sandboxtest.Required() {
			t.Fatalf("%s is missing; run .ci/test-deps.sh", name)
		}
		t.Skipf("%s is missing", name)
	}
	return p
}

// script writes what gen prints to a file and returns its path.
func script(t *testing.T, gen func(w *bytes.Buffer)) string {
	t.Helper()
	var b bytes.Buffer
	gen(&b)
	f := filepath.Join(t.TempDir(), "completion")
	if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func runShell(t *testing.T, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", argv, err, out)
	}
	return string(out)
}

// The bash script loads, registers _gatehouse, and completes commands,
// subcommands and flags; an argument that is no flag is left to the
// default (file) completion.
func TestCompletionBash(t *testing.T) {
	bash := shell(t, "bash")
	f := script(t, func(b *bytes.Buffer) { writeBashCompletion(b) })
	out := runShell(t, bash, "-c", `source "$1"
complete -p gatehouse
try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _gatehouse; echo "[${COMPREPLY[*]}]"; }
try gatehouse au
try gatehouse audit l
try gatehouse audit list --s
try gatehouse exec --c
try gatehouse exec some
try gatehouse completion ''
try gatehouse ''`, "bash", f)
	want := []string{
		"complete -o default -F _gatehouse gatehouse",
		"[audit]",
		"[list]",
		"[--sandbox-mode --since --status]",
		"[--config --cwd]",
		"[]",
		"[bash fish zsh]",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want)+1 {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want)+1, out)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: got %q, want %q", i, lines[i], w)
		}
	}
	for _, c := range visibleCommands() {
		if !strings.Contains(" "+strings.Trim(lines[len(want)], "[]")+" ", " "+c.name+" ") {
			t.Errorf("the bash completion of commands lacks %q: %s", c.name, lines[len(want)])
		}
	}
	if strings.Contains(lines[len(want)], "relay") || strings.Contains(lines[len(want)], " man ") {
		t.Errorf("hidden commands completed: %s", lines[len(want)])
	}
}

// fish completes a command with its summary, a subcommand and a flag.
func TestCompletionFish(t *testing.T) {
	fish := shell(t, "fish")
	f := script(t, func(b *bytes.Buffer) { writeFishCompletion(b) })
	out := runShell(t, fish, "--no-config", "-c", `source $argv[1]
complete -C "gatehouse au"
echo ==
complete -C "gatehouse audit "
echo ==
complete -C "gatehouse audit list --si"
echo ==
complete -C "gatehouse workspace list --"`, f)
	parts := strings.Split(out, "==\n")
	if len(parts) != 4 {
		t.Fatalf("fish said:\n%s", out)
	}
	if want := "audit\t" + auditCmd.summary + "\n"; parts[0] != want {
		t.Errorf("gatehouse au: got %q, want %q", parts[0], want)
	}
	for _, s := range []string{"list", "show", "export", "verify"} {
		if !strings.Contains(parts[1], s+"\n") {
			t.Errorf("gatehouse audit: %q lacks %s", parts[1], s)
		}
	}
	if parts[2] != "--since\n" {
		t.Errorf("gatehouse audit list --si: got %q", parts[2])
	}
	if !strings.Contains(parts[3], "--json") {
		t.Errorf("gatehouse workspace list --: got %q", parts[3])
	}
}

// zsh loads the script as a completion function (compinit, then the
// script sourced): _gatehouse is registered for gatehouse.
func TestCompletionZsh(t *testing.T) {
	zsh := shell(t, "zsh")
	f := script(t, func(b *bytes.Buffer) { writeZshCompletion(b) })
	runShell(t, zsh, "-n", f)
	out := runShell(t, zsh, "-f", "-c", `autoload -Uz compinit && compinit -u -D && source "$1" && print -r -- "$_comps[gatehouse]" && whence -w _gatehouse`, "zsh", f)
	if out != "_gatehouse\n_gatehouse: function\n" {
		t.Errorf("zsh: got %q", out)
	}
	b, _ := os.ReadFile(f)
	for _, c := range visibleCommands() {
		if !strings.Contains(string(b), "'"+c.name+":") {
			t.Errorf("the zsh completion lacks %q", c.name)
		}
	}
}

// The manual page lists every command 'gatehouse help' does, with its
// usage, and man reads it without a warning.
func TestManPage(t *testing.T) {
	var page, help bytes.Buffer
	writeManPage(&page, version.Info{Version: "1.2.3", Commit: "abc", Date: "2026-01-02T03:04:05Z"})
	usage(&help)
	if !strings.HasPrefix(page.String(), `.TH GATEHOUSE 1 "2026-01-02" "gatehouse 1.2.3"`) {
		t.Errorf("the header: %.80q", page.String())
	}
	n := 0
	for _, line := range strings.Split(help.String(), "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || len(f) == 0 {
			continue
		}
		n++
		if !strings.Contains(page.String(), ".TP\n.B "+roff(f[0])+"\n"+roff(commands[f[0]].summary)+"\n") {
			t.Errorf("the manual page lacks %q", f[0])
		}
	}
	if n != len(visibleCommands()) || n < 20 {
		t.Errorf("help lists %d commands, the table %d", n, len(visibleCommands()))
	}
	if !strings.Contains(page.String(), roff("gatehouse audit list [--since DUR]")) {
		t.Error("the manual page lacks audit's usage")
	}
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("man is missing")
	}
	f := filepath.Join(t.TempDir(), "gatehouse.1")
	os.WriteFile(f, page.Bytes(), 0o644)
	cmd := exec.Command(man, "--warnings", "-l", f)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("man -l: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "gatehouse audit list [--since DUR]") {
		t.Errorf("man rendered:\n%s", stdout.String())
	}
}
