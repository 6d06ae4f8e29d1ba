package cli

import (
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
func serviceScriptCmds() map[string]func(*testscript.TestScript, bool, []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
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
