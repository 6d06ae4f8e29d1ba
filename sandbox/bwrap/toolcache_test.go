package bwrap

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// The agent's tool cache is bound into a private tmpfs over the root of
// every agent's, which is made read-only only after the bind; it comes
// after the deny-read set, so a hidden directory above it cannot cover it.
func TestArgsToolCache(t *testing.T) {
	spec := &sandbox.Spec{Dir: "/h/src", WorkspaceRoots: []string{"/h/src"}, InitPath: "/gh",
		ToolCache:  &sandbox.ToolCache{Root: "/h/.cache/gatehouse/sandbox", Dir: "/h/.cache/gatehouse/sandbox/cli"},
		RuntimeDir: "/run/user/1000"}
	a := strings.Join(Args(spec, &Mounts{HideDirs: []string{"/h/.ssh"}}, Options{}), " ")
	want := "--perms 0700 --tmpfs /h/.cache/gatehouse/sandbox --bind /h/.cache/gatehouse/sandbox/cli /h/.cache/gatehouse/sandbox/cli --remount-ro /h/.cache/gatehouse/sandbox"
	i, j := strings.Index(a, want), strings.Index(a, "--tmpfs /h/.ssh")
	if i < 0 || j < 0 || i < j {
		t.Errorf("args %q: want %q after the deny-read tmpfs", a, want)
	}
	if !strings.Contains(a, "--perms 0700 --dir /run/user/1000") || strings.Index(a, "--dir /run/user/1000") < strings.Index(a, "--tmpfs /run ") {
		t.Errorf("args %q: want the runtime directory made in the sandbox's /run", a)
	}
	// Without them, neither appears.
	spec.ToolCache, spec.RuntimeDir = nil, ""
	if b := Args(spec, &Mounts{}, Options{}); slices.Contains(b, "--remount-ro") || slices.Contains(b, "--dir") {
		t.Errorf("args %q without a tool cache", b)
	}
}
