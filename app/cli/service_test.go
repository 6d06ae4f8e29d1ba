package cli

import (
	"context"
	"maps"
	"os"
	"path/filepath"
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
func serviceScriptCmds() map[string]func(*testscript.TestScript, bool, []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
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
