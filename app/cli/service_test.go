package cli

import (
	"context"
	"maps"
	"os"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
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
//	waitservice     wait up to 10 s for the service to answer on its
//	                socket (a killed one leaves its socket file behind)
func serviceScriptCmds() map[string]func(*testscript.TestScript, bool, []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
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
