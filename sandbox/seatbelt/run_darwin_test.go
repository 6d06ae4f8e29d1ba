package seatbelt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
)

// These run the real sandbox-exec with the generated profile (macOS only;
// REQUIRE_SANDBOX=1 fails them where Seatbelt does not run). The escape
// suite proper is service/pipeline/escape_test.go.

func realSpec(t *testing.T, command string) *sandbox.Spec {
	t.Helper()
	sandboxtest.RequireSeatbelt(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := sandboxtest.Dir(t)
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	for _, d := range []string{ws, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &sandbox.Spec{
		ID: "0123456789", Shell: "/bin/bash", Command: command, Dir: ws,
		Env:            []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=/tmp"},
		WorkspaceRoots: []string{ws}, DenyRead: []string{filepath.Join(home, ".ssh")},
		WriteDeny: sandbox.DefaultWriteDeny, InitPath: exe, FileSizeMax: 1 << 20,
		Timeout: 30 * time.Second,
	}
}

func TestRunDarwin(t *testing.T) {
	t.Parallel()
	s := realSpec(t, `echo hi; echo "$TMPDIR"; echo x > "$TMPDIR/t" && echo tmp-ok; echo w > inside && echo ws-ok; echo no > "$HOME/outside" || echo home-refused; cat "$HOME/.ssh/id" || echo ssh-refused`)
	os.WriteFile(filepath.Join(s.DenyRead[0], "id"), []byte("SECRET\n"), 0o600)
	var o, e bytes.Buffer
	res := Runner{}.Run(context.Background(), s, sandbox.Streams{Stdout: &o, Stderr: &e})
	if res.Status != sandbox.StatusCompleted || res.Mode != sandbox.ModeSeatbelt {
		t.Fatalf("result %+v, stderr %q", res, e.String())
	}
	out := o.String()
	for _, want := range []string{"hi\n", "tmp-ok\n", "ws-ok\n", "home-refused\n", "ssh-refused\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, out, e.String())
		}
	}
	if strings.Contains(out, "SECRET") || strings.Contains(out, "\n/tmp\n") {
		t.Errorf("stdout:\n%s", out)
	}
	if l := res.Limits; !l.FileSize || l.DaemonKill || l.Memory || l.Pids {
		t.Errorf("limits %+v: want file_size only", l)
	}
}

func TestRunDarwinBadProfileFailsToStart(t *testing.T) {
	t.Parallel()
	s := realSpec(t, `echo never`)
	s.WorkspaceRoots = append(s.WorkspaceRoots, "/bad\npath")
	res := Runner{}.Run(context.Background(), s, sandbox.Streams{})
	if res.Status != sandbox.StatusFailedToStart || !strings.Contains(res.Error, "control character") {
		t.Errorf("result %+v, want failed_to_start naming the path", res)
	}
}
