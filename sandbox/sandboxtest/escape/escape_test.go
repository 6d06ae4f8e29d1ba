package escape

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox/seccomp"
)

// filterEnv makes a re-executed probe install the seccomp filter first, as
// sandbox-exec does before it execs the shell.
const filterEnv = "GATEHOUSE_ESCAPE_TEST_FILTER"

// TestMain lets the test binary serve as the probe, the way escape tests
// elsewhere use this package: `<test binary> escape-probe NAME [ARG]`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "escape-probe" {
		if os.Getenv(filterEnv) == "1" {
			runtime.LockOSThread()
			if err := seccomp.Install(seccomp.Options{}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// runHere runs a probe in this process.
func runHere(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(&o, &e, args)
	return code, strings.TrimSpace(o.String()), e.String()
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		nil,
		{"no-such-probe"},
		{"tcp"},
		{"read", "a", "b"},
		{"socketpair", "extra"},
	} {
		code, out, errOut := runHere(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: escape-probe NAME") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and usage", args, code, out, errOut)
		}
	}
	// Usage lists every probe.
	_, _, errOut := runHere()
	for name := range probes {
		if !strings.Contains(errOut, "\n  "+name) {
			t.Errorf("usage does not list %s", name)
		}
	}
}

func TestPortableProbes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "written")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	unixErrno := runtime.GOOS == "linux" || runtime.GOOS == "darwin"
	for _, tc := range []struct {
		args []string
		want string // the output line, or its prefix when ending in "…"
	}{
		{[]string{"read", existing}, "read: allowed"},
		{[]string{"read", filepath.Join(dir, "missing")}, "read: blocked: …"},
		{[]string{"write", written}, "write: allowed"},
		{[]string{"write", filepath.Join(dir, "missing", "f")}, "write: blocked: …"},
		{[]string{"tcp", ln.Addr().String()}, "tcp: allowed"},
		{[]string{"tcp", closedAddr}, "tcp: blocked: …"},
		{[]string{"unix-connect", filepath.Join(dir, "no.sock")}, "unix-connect: blocked: …"},
		{[]string{"resolve", "gatehouse-escape-probe.invalid"}, "resolve: blocked: …"},
	} {
		code, out, _ := runHere(tc.args...)
		prefix, isPrefix := strings.CutSuffix(tc.want, "…")
		if code != 0 || (isPrefix && !strings.HasPrefix(out, prefix)) || (!isPrefix && out != tc.want) {
			t.Errorf("%q: exit %d, output %q; want exit 0 and %q", tc.args, code, out, tc.want)
		}
	}
	if unixErrno {
		if _, out, _ := runHere("read", filepath.Join(dir, "missing")); !strings.HasPrefix(out, "read: blocked: ENOENT: open ") {
			t.Errorf("read of a missing file: got %q, want the errno name first", out)
		}
		if _, out, _ := runHere("tcp", closedAddr); !strings.HasPrefix(out, "tcp: blocked: ECONNREFUSED: ") {
			t.Errorf("tcp to a closed port: got %q, want ECONNREFUSED first", out)
		}
	}
	if b, err := os.ReadFile(written); err != nil || string(b) != "gatehouse escape probe\n" {
		t.Errorf("write left %q, %v", b, err)
	}
}

func TestSocketProbes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		if _, out, _ := runHere("socketpair"); !strings.HasPrefix(out, "socketpair: unsupported: ") {
			t.Errorf("socketpair on %s: got %q, want unsupported", runtime.GOOS, out)
		}
		return
	}
	for _, name := range []string{"socketpair", "unix-socket"} {
		if code, out, _ := runHere(name); code != 0 || out != name+": allowed" {
			t.Errorf("%s outside a sandbox: exit %d, output %q; want allowed", name, code, out)
		}
	}
}

// TestSetupErrors checks that a probe that cannot try says error, not
// blocked, and exits 1.
func TestSetupErrors(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("proc-mem is linux only")
	}
	if code, out, _ := runHere("proc-mem", "self-ish"); code != 1 || !strings.HasPrefix(out, "proc-mem: error: bad pid") {
		t.Errorf("proc-mem with a bad pid: exit %d, output %q", code, out)
	}
}
