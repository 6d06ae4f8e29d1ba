package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// The tray's start at login, as the packages install it, is what
// 'gatehouse install' writes for a gatehouse in /usr/bin (the .deb and
// .rpm) or /usr/local/bin (Homebrew's LaunchAgent, rewritten to its
// prefix by the formula): the files in packaging/ are these rendered, and
// go test -update writes them again.
func TestPackagedTrayAutostart(t *testing.T) {
	for _, tc := range []struct {
		file, goos, exe string
	}{
		{"xdg/gatehouse-tray.desktop", "linux", "/usr/bin/gatehouse"},
		{"launchd/dev.gatehouse.tray.plist", "darwin", "/usr/local/bin/gatehouse"},
	} {
		_, want := trayAutostart(tc.goos, "/home/u", "", tc.exe)
		path := filepath.Join("..", "..", "packaging", tc.file)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from what 'gatehouse install' writes (go test -update):\n%s", path, want)
		}
	}
}

// runCLI runs gatehouse with args in an environment holding only vars.
func runCLI(t *testing.T, vars map[string]string, args ...string) (ExitStatus, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// packaging/it/managed-settings.json is what 'gatehouse managed-settings'
// renders for the packaged hook, /usr/bin/gatehouse-hook, on Linux with
// the default directories (paths under the home directory are written
// ~/…, so any home renders the same file); go test -update writes it
// again.
func TestITManagedSettings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the committed file is the Linux rendering; the directories differ on " + runtime.GOOS)
	}
	code, got, stderr := runCLI(t, map[string]string{"HOME": "/home/user"}, "managed-settings", "--hook", "/usr/bin/gatehouse-hook")
	if code != ExitOK {
		t.Fatalf("managed-settings: exit %d: %s", code, stderr)
	}
	path := filepath.Join("..", "..", "packaging", "it", "managed-settings.json")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from 'gatehouse managed-settings --hook /usr/bin/gatehouse-hook' (go test -update):\n%s", path, got)
	}
	for _, h := range []string{`"'/usr/bin/gatehouse-hook' hook claude --routing governed_shell"`, `"allowManagedHooksOnly": true`, `"Read(~/.ssh/**)"`} {
		if !strings.Contains(got, h) {
			t.Errorf("the rendered settings lack %s", h)
		}
	}
	if strings.Contains(got, "/home/user") {
		t.Error("the rendered settings name one user's home directory")
	}
}

// packaging/it/managed.yaml, the example managed file, is valid:
// 'gatehouse config check --managed' accepts it, and it says what it
// promises (the workspace under ~/work, an egress allowlist, rules,
// sandbox_required).
func TestITManagedFile(t *testing.T) {
	home := t.TempDir()
	file, err := filepath.Abs(filepath.Join("..", "..", "packaging", "it", "managed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, map[string]string{"HOME": home}, "config", "check", "--managed", file)
	if code != ExitOK || !strings.HasPrefix(out, file+": ok\n") {
		t.Fatalf("config check --managed: exit %d\n%s%s", code, out, stderr)
	}
	opts := policy.DefaultLoadOptions(runtime.GOOS, home, func(string) string { return "" })
	opts.ManagedFile = file
	l, err := policy.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := l.Config.Policy
	if !p.SandboxRequired || len(p.EgressAllowlist) == 0 || len(p.Rules) == 0 ||
		len(p.WorkspaceRoots) != 1 || p.WorkspaceRoots[0] != filepath.Join(home, "work") {
		t.Errorf("the example does not set what it documents: sandbox_required %v, egress %v, %d rules, roots %v",
			p.SandboxRequired, p.EgressAllowlist, len(p.Rules), p.WorkspaceRoots)
	}
	// A user file that widens it is refused, naming the managed file.
	user := filepath.Join(home, "config.yaml")
	os.WriteFile(user, []byte("policy:\n  egress_allowlist: [\"*\"]\n"), 0o644)
	code, _, stderr = runCLI(t, map[string]string{"HOME": home}, "config", "check", "--managed", file, user)
	if code == ExitOK || !strings.Contains(stderr, "policy.egress_allowlist") {
		t.Errorf("a widening user file: exit %d: %s", code, stderr)
	}
}
