package seatbelt

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

func TestRewrite(t *testing.T) {
	t.Parallel()
	pins := []sandbox.Pin{
		{Path: "/w/x.sh", Source: "/pin/0"},
		{Path: "/w/sub/it's.sh", Source: "/pin/it's 1"},
	}
	for _, tc := range []struct {
		name, cmd, want string
		rewrote         []string
	}{
		{"by path", "./x.sh a b", "'/pin/0' a b", []string{"/w/x.sh"}},
		{"absolute", "/w/x.sh", "'/pin/0'", []string{"/w/x.sh"}},
		{"interpreter", "bash x.sh && sh ./x.sh", "bash '/pin/0' && sh '/pin/0'", []string{"/w/x.sh"}},
		{"source and dot", "source x.sh; . ./x.sh", "source '/pin/0'; . '/pin/0'", []string{"/w/x.sh"}},
		{"quoted name", `bash "sub/it's.sh"`, `bash '/pin/it'\''s 1'`, []string{"/w/sub/it's.sh"}},
		{"single quoted", `bash 'x.sh'`, `bash '/pin/0'`, []string{"/w/x.sh"}},
		{"stdin", "bash < x.sh", "bash < '/pin/0'", []string{"/w/x.sh"}},
		{"in a pipeline and a substitution", "echo $(./x.sh) | bash ./x.sh", "echo $('/pin/0') | bash '/pin/0'", []string{"/w/x.sh"}},
		{"dot-dot path", "bash sub/../x.sh", "bash '/pin/0'", []string{"/w/x.sh"}},
		{"nothing else changes", "  ./x.sh   # x.sh\n", "  '/pin/0'   # x.sh\n", []string{"/w/x.sh"}},
		// Partial coverage: words that are not plain text run from their path.
		{"variable", `S=./x.sh; bash "$S"`, `S=./x.sh; bash "$S"`, nil},
		{"escape", `bash x\.sh`, `bash x\.sh`, nil},
		{"glob", `bash x.s?`, `bash x.s?`, nil},
		{"another file", "bash y.sh; cat x.sh.bak", "bash y.sh; cat x.sh.bak", nil},
		{"output redirect", "echo > x.sh", "echo > x.sh", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, rewrote, err := Rewrite(tc.cmd, "/w", "bash", pins)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Rewrite(%q) = %q, want %q", tc.cmd, got, tc.want)
			}
			if !slices.Equal(rewrote, tc.rewrote) {
				t.Errorf("rewrote %q, want %q", rewrote, tc.rewrote)
			}
		})
	}
}

func TestRewriteNoPins(t *testing.T) {
	t.Parallel()
	// Not even parsed: text that does not parse comes back as it is.
	if got, _, err := Rewrite("echo 'unterminated", "/w", "bash", nil); err != nil || got != "echo 'unterminated" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, _, err := Rewrite("echo 'unterminated", "/w", "bash", []sandbox.Pin{{Path: "/w/x.sh", Source: "/p"}}); err == nil {
		t.Error("Rewrite accepted text that does not parse")
	}
}

func TestVerifyPins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "0")
	data := []byte("echo judged\n")
	if err := os.WriteFile(src, data, 0o400); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	pin := sandbox.Pin{Path: "/w/x.sh", Source: src, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	if err := VerifyPins([]sandbox.Pin{pin}); err != nil {
		t.Fatalf("the judged copy: %v", err)
	}
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("echo other!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := VerifyPins([]sandbox.Pin{pin}); err == nil || !strings.Contains(err.Error(), "/w/x.sh") {
		t.Errorf("a changed copy: got %v, want an error naming the script", err)
	}
	os.Remove(src)
	if err := VerifyPins([]sandbox.Pin{pin}); err == nil {
		t.Error("a missing copy passed")
	}
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	spec, _ := representative()
	spec.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HTTP_PROXY=http://elsewhere:1"}
	spec.Command = `bash build.sh && ./build.sh`
	p, err := Prepare(spec, "/private/var/folders/xy/T/gatehouse-tmp-1", []string{"/Users/ada/src/My Project/nested/.envrc"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `bash '/private/var/folders/xy/T/gatehouse-pin-1/0' && '/private/var/folders/xy/T/gatehouse-pin-1/0'`; p.Spec.Command != want {
		t.Errorf("command %q, want %q", p.Spec.Command, want)
	}
	if !slices.Equal(p.Rewritten, []string{"/Users/ada/src/My Project/build.sh"}) {
		t.Errorf("rewritten %q", p.Rewritten)
	}
	for _, want := range []string{"TMPDIR=/private/var/folders/xy/T/gatehouse-tmp-1", "HTTP_PROXY=http://127.0.0.1:52144", "https_proxy=http://127.0.0.1:52144", "ALL_PROXY=socks5h://127.0.0.1:52144", "PATH=/usr/bin:/bin"} {
		if !slices.Contains(p.Spec.Env, want) {
			t.Errorf("env lacks %s: %q", want, p.Spec.Env)
		}
	}
	for _, not := range []string{"TMPDIR=/tmp", "HTTP_PROXY=http://elsewhere:1"} {
		if slices.Contains(p.Spec.Env, not) {
			t.Errorf("env keeps %s", not)
		}
	}
	if !strings.Contains(p.Profile, `(subpath "/Users/ada/src/My Project/nested/.envrc")`) {
		t.Errorf("profile lacks the protected path found below the root:\n%s", p.Profile)
	}
	// The survey's paths replace the names: no .git where the survey
	// found none, so git init may make one.
	if strings.Contains(p.Profile, `/.git`) {
		t.Errorf("profile protects a .git the survey did not find:\n%s", p.Profile)
	}
	if spec.Command != `bash build.sh && ./build.sh` || slices.Contains(spec.Env, "TMPDIR=/private/var/folders/xy/T/gatehouse-tmp-1") {
		t.Error("Prepare changed the spec it was given")
	}
}

// A profile names paths as they are on disk: a credential directory under
// a symlinked temporary directory (/var -> /private/var on macOS) is
// allowed where it really is, and its hidden parent denied both ways.
func TestResolved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "private", "var")
	if err := os.MkdirAll(filepath.Join(real, "cred", "exec-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "var")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	spec := &sandbox.Spec{
		DenyRead:  []string{filepath.Join(link, "cred"), "/absent/.ssh"},
		CredDir:   filepath.Join(link, "cred", "exec-1"),
		ToolCache: &sandbox.ToolCache{Root: link, Dir: filepath.Join(link, "cred")},
	}
	got := resolved(spec, filepath.EvalSymlinks)
	want := []string{filepath.Join(link, "cred"), filepath.Join(real, "cred"), "/absent/.ssh"}
	if !slices.Equal(got.DenyRead, want) {
		t.Errorf("deny-read %q, want %q", got.DenyRead, want)
	}
	if got.CredDir != filepath.Join(real, "cred", "exec-1") || got.ToolCache.Root != real || got.ToolCache.Dir != filepath.Join(real, "cred") {
		t.Errorf("cred dir %q, tool cache %+v: want them resolved", got.CredDir, got.ToolCache)
	}
	if spec.CredDir != filepath.Join(link, "cred", "exec-1") || len(spec.DenyRead) != 2 {
		t.Error("resolved changed the spec it was given")
	}
}
