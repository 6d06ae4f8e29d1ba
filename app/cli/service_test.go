package cli

import (
	"context"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gatehouse-dev/gatehouse/service/audit"
)

// scriptCmds merges testscript command sets.
func scriptCmds(sets ...map[string]func(*testscript.TestScript, bool, []string)) map[string]func(*testscript.TestScript, bool, []string) {
	out := map[string]func(*testscript.TestScript, bool, []string){}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

// serviceScriptCmds are the commands the service scripts use:
//
//	shortdir VAR    set VAR to a new directory under /tmp (socket paths
//	                must be short)
//	waitfile PATH   wait up to 10 s for PATH to exist
//	keyfile VAR DIR set VAR to the one audit key file in DIR, checking
//	                it is 0600
//	waitservice     wait up to 10 s for the service to answer on its
//	                socket (a killed one leaves its socket file behind)
//	reapservice PIDFILE
//	                at the script's end, kill the service holding the
//	                lock next to PIDFILE (a background service the script
//	                left running)
//	sleeper PIDFILE start a process that is not the service, write its pid
//	                to PIDFILE and to $SLEEPER_PID
//	killpidfile PIDFILE
//	                SIGKILL the process PIDFILE names and wait up to 10 s
//	                for the service's lock to be free
//	freeport VAR    set VAR to a TCP port free on the host's 127.0.0.1
//	                (one the kernel picked, closed again)
func serviceScriptCmds() map[string]func(*testscript.TestScript, bool, []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
		"reapservice": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: reapservice PIDFILE")
			}
			lock := serviceLockPath(filepath.Dir(ts.MkAbs(args[0])))
			ts.Defer(func() {
				if held, pid, _ := serviceLockHolder(lock); held && pid > 0 {
					if p, err := os.FindProcess(pid); err == nil {
						p.Kill()
					}
				}
			})
		},
		"sleeper": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: sleeper PIDFILE")
			}
			cmd := exec.Command("sleep", "600")
			ts.Check(cmd.Start())
			ts.Defer(func() { cmd.Process.Kill(); cmd.Wait() })
			pid := strconv.Itoa(cmd.Process.Pid)
			ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(args[0])), 0o700))
			ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(pid+"\n"), 0o600))
			ts.Setenv("SLEEPER_PID", pid)
		},
		"killpidfile": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: killpidfile PIDFILE")
			}
			b, err := os.ReadFile(ts.MkAbs(args[0]))
			ts.Check(err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			ts.Check(err)
			proc, err := os.FindProcess(pid)
			ts.Check(err)
			ts.Check(proc.Kill())
			lock := serviceLockPath(filepath.Dir(ts.MkAbs(args[0])))
			for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
				if held, _, _ := serviceLockHolder(lock); !held {
					return
				}
			}
			ts.Fatalf("the service's lock is still held after SIGKILL of %d", pid)
		},
		"keyfile": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: keyfile VAR DIR")
			}
			m, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[1]), audit.KeyFilePrefix+"*"))
			if len(m) != 1 {
				ts.Fatalf("%d key files in %s, want 1", len(m), args[1])
			}
			fi, err := os.Stat(m[0])
			ts.Check(err)
			if fi.Mode().Perm() != 0o600 {
				ts.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
			}
			ts.Setenv(args[0], m[0])
		},
		"waitservice": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 0 {
				ts.Fatalf("usage: waitservice")
			}
			env := &Env{Getenv: ts.Getenv}
			c, err := serviceClient(env)
			ts.Check(err)
			for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
				if _, err := c.Status(context.Background()); err == nil {
					return
				}
			}
			ts.Fatalf("the service did not answer on %s", c.Socket())
		},
		"freeport": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: freeport VAR")
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			ts.Check(err)
			ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
			ts.Check(ln.Close())
		},
		"shortdir": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: shortdir VAR")
			}
			d, err := os.MkdirTemp("/tmp", "ghs")
			ts.Check(err)
			ts.Defer(func() { os.RemoveAll(d) })
			ts.Setenv(args[0], d)
		},
		"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: waitfile PATH")
			}
			for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
					return
				}
			}
			ts.Fatalf("%s did not appear", args[0])
		},
	}
}
