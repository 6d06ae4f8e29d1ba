package analysis

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make's functions of text alone expand as GNU make expands them: the
// recipe analysis judges is the one make runs (make -n prints it).
func TestMakeTextFunctions(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make missing")
	}
	dir := t.TempDir()
	mk := "SRCS := main.c util.c lib/x.c\nEMPTY :=\n" +
		"all:\n\techo $(words $(SRCS)) $(patsubst %.c,%.o,$(SRCS)) $(addprefix src/,$(SRCS)) $(addsuffix .bak,a b)" +
		" $(notdir $(SRCS)) $(basename $(SRCS)) $(suffix $(SRCS) README) $(filter %.c %.h,a.c b.h c.go) $(filter-out %.c,a.c b.h)" +
		" $(word 2,$(SRCS)) $(wordlist 2,3,$(SRCS)) $(subst .c,.h,$(SRCS)) $(sort b a b) $(dir lib/x.c y)" +
		" $(firstword $(SRCS)) $(lastword $(SRCS)) $(join a b,1 2 3) $(strip   a   b  ) [$(findstring ain,$(SRCS))] [$(findstring zz,a)]" +
		" $(words $(EMPTY)) [$(word 9,$(SRCS))] $(subst a,b,c,d)\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("make", "-n", "-s", "-C", dir).Output()
	if err != nil {
		t.Fatalf("make -n: %v", err)
	}
	want := strings.TrimPrefix(strings.TrimSpace(string(out)), "echo ")
	o := opts(dir)
	o.ScriptRoots = []string{dir}
	tr := Analyze("make", o)
	var got string
	for _, n := range tr.Nodes {
		if n.Name == "echo" {
			var args []string
			for _, a := range n.Argv[1:] {
				if a.Dynamic {
					t.Fatalf("an argument is dynamic: %+v", a)
				}
				args = append(args, a.Value)
			}
			got = strings.Join(args, " ")
		}
	}
	if got != strings.Join(strings.Fields(want), " ") {
		t.Errorf("analysis expands the recipe to\n%s\nmake runs\n%s", got, want)
	}
}
