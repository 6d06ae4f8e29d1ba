package sandboxinit

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/buildid"
)

func TestPlanOfAnotherBuild(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WritePlan(&b, &Stage1Spec{Shell: "/bin/sh", Argv: []string{"/bin/sh"}, Seccomp: "off"}); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPlan(&b)
	if err != nil || p.BuildID != buildid.ID() {
		t.Fatalf("own plan: %+v, %v; want build %s", p, err, buildid.ID())
	}

	for _, plan := range []string{
		`{"build_id":"other","shell":"/bin/sh","argv":["/bin/sh"],"seccomp":"off"}`,
		`{"shell":"/bin/sh","argv":["/bin/sh"],"seccomp":"off"}`,
		// A plan of another build need not decode as this one's.
		`{"build_id":"other","shell":["/bin/sh"]}`,
	} {
		_, err := ReadPlan(strings.NewReader(strconv.Itoa(len(plan)) + "\n" + plan))
		if err == nil || !BuildMismatch(err.Error()) || !strings.Contains(err.Error(), "the sandbox init is build "+buildid.ID()) {
			t.Errorf("ReadPlan(%s) = %v, want a build mismatch", plan, err)
		}
	}
}
