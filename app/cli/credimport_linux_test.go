package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// importToken is what the fake gh prints, shaped like gh's OAuth tokens.
const importToken = "gho_Imp0rtedFromTheHostKeyring0123456789"

// fakeGH writes a gh that records its arguments in dir/gh-args and
// prints importToken (or, for a host it has no token for, fails as gh
// does); it returns the PATH that finds it.
func fakeGH(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$*" >> %q
case "$*" in
"auth token" | "auth token --hostname ghe.example.com") printf '%%s\n' %q ;;
*) echo "no oauth token found for ${4:-github.com}" >&2; exit 1 ;;
esac
`, filepath.Join(dir, "gh-args"), importToken)
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// openTerminal returns the two ends of a new pseudo-terminal: what the
// CLI reads as its standard input, and where the person types.
func openTerminal(t *testing.T) (tty, typed *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts, ptm
}

// cred import gh asks on the terminal, stores the token only on yes, and
// shows the id, the kind and the length, never the value; without a
// terminal it stores only under --yes, and does not even ask gh.
func TestCredImportGH(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		terminal bool
		typed    string
		o        ghImport
		stored   bool
		ranGH    string // gh's arguments, "" when it must not run
		errText  string
		out      []string // in stdout
	}{
		{name: "yes at the terminal", terminal: true, typed: "y\n", o: ghImport{id: "github_token"}, stored: true, ranGH: "auth token",
			out: []string{"stored credential github_token in the keychain (from gh auth token)",
				`GH_TOKEN: {credential: github_token, hosts: [api.github.com, github.com, uploads.github.com, "*.githubusercontent.com"]}`}},
		{name: "no at the terminal", terminal: true, typed: "n\n", o: ghImport{id: "github_token"}, ranGH: "auth token",
			errText: "cred import gh: nothing stored: the answer was not yes"},
		{name: "enter at the terminal", terminal: true, typed: "\n", o: ghImport{id: "github_token"}, ranGH: "auth token",
			errText: "nothing stored"},
		{name: "no terminal", o: ghImport{id: "github_token"},
			errText: "cred import gh: no terminal to ask whether to store gh's token"},
		{name: "no terminal, --yes", o: ghImport{id: "gh_work", yes: true}, stored: true, ranGH: "auth token",
			out: []string{"stored credential gh_work in the keychain"}},
		{name: "an Enterprise Server host", o: ghImport{id: "ghe_token", host: "ghe.example.com", yes: true}, stored: true, ranGH: "auth token --hostname ghe.example.com",
			out: []string{"(from gh auth token --hostname ghe.example.com)", "GH_ENTERPRISE_TOKEN: {credential: ghe_token, hosts: [ghe.example.com]}", "egress_allowlist: [ghe.example.com]"}},
		{name: "gh has no token", o: ghImport{id: "github_token", host: "other.example.com", yes: true}, ranGH: "auth token --hostname other.example.com",
			errText: "cred import gh: gh auth token --hostname other.example.com failed: no oauth token found for other.example.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := fakeGH(t, dir)
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(c.typed), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
				switch k {
				case "PATH":
					return path
				case "HOME":
					return filepath.Join(dir, "home")
				}
				return ""
			}}
			if c.terminal {
				tty, typed := openTerminal(t)
				env.Stdin = tty
				typed.WriteString(c.typed)
			}
			store := keyring.NewMemory()
			err := importGH(context.Background(), env, store, c.o)
			if c.errText == "" && err != nil || c.errText != "" && (err == nil || !strings.Contains(err.Error(), c.errText)) {
				t.Fatalf("error %v, want %q", err, c.errText)
			}
			got, gerr := store.Get(c.o.id)
			if c.stored != (gerr == nil && got == importToken) {
				t.Errorf("stored %q (%v), want stored %v", got, gerr, c.stored)
			}
			args, _ := os.ReadFile(filepath.Join(dir, "gh-args"))
			if strings.TrimSpace(string(args)) != c.ranGH {
				t.Errorf("gh ran with %q, want %q", args, c.ranGH)
			}
			for _, want := range c.out {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			all := stdout.String() + stderr.String()
			if err != nil {
				all += err.Error()
			}
			if strings.Contains(all, importToken) || strings.Contains(all, importToken[4:20]) {
				t.Errorf("the value was shown:\n%s", all)
			}
			if c.ranGH != "" && c.errText == "" || c.terminal {
				if want := "gave a GitHub token, 40 bytes."; !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if c.terminal && !strings.Contains(stderr.String(), "Store it in the keychain as github_token? [y/N] ") {
				t.Errorf("no question on the terminal:\n%s", stderr.String())
			}
		})
	}
}

// A credential already stored under the id is named before the question.
func TestCredImportGHReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := fakeGH(t, dir)
	store := keyring.NewMemory()
	if err := broker.Set(store, "github_token", "an-older-value", time.Now()); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		if k == "PATH" {
			return path
		}
		return ""
	}}
	if err := importGH(context.Background(), env, store, ghImport{id: "github_token", yes: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "It replaces the credential github_token set ") {
		t.Errorf("stderr does not say it replaces one:\n%s", stderr.String())
	}
	if v, _ := store.Get("github_token"); v != importToken {
		t.Errorf("stored %q", v)
	}
}

// The lines cred import prints load as they are, and mask the credential
// bound to the hosts gh reaches.
func TestCredImportSnippetLoads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ host, variable, hosts string }{
		{"", "GH_TOKEN", "[api.github.com github.com uploads.github.com *.githubusercontent.com]"},
		{"ghe.example.com", "GH_ENTERPRISE_TOKEN", "[ghe.example.com]"},
		{"ghe.example.com:8443", "GH_ENTERPRISE_TOKEN", "[ghe.example.com:8443]"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(file, []byte(ghSnippet("github_token", c.host)), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := policy.Load(policy.LoadOptions{UserFile: file, ExplicitUser: true, Home: dir})
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.host, err, ghSnippet("github_token", c.host))
		}
		m, ok := l.Config.Exec.Credentials.Env[c.variable]
		if !ok || m.Credential != "github_token" || m.EffectiveMode() != policy.ModeMask || fmt.Sprint(m.Hosts) != c.hosts {
			t.Errorf("%q: %s is %+v (mode %s), want github_token masked to %s", c.host, c.variable, m, m.EffectiveMode(), c.hosts)
		}
	}
}
