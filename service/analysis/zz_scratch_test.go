package analysis

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

func TestScratch(t *testing.T) {
	cmds := os.Getenv("CMD")
	if cmds == "" {
		t.Skip()
	}
	for _, cmd := range strings.Split(cmds, "\n###\n") {
		tr := Analyze(cmd, Options{Dialect: "bash", Dir: "/home/u/src", Env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin:/bin"}, ScriptRoots: []string{"/home/u/src"}, Writable: []string{"/home/u/src"}})
		d := Judge(tr, &policy.Policy{DefaultAction: "allow", DynamicAction: "ask"})
		os.Stdout.WriteString("=== " + cmd + "\n")
		WriteText(os.Stdout, tr, d)
	}
}
