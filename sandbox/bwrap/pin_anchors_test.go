package bwrap

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

func TestPinAnchors(t *testing.T) {
	t.Parallel()
	roots := []string{"/w", "/app"}
	for _, tc := range []struct {
		pin  string
		want []string
	}{
		{"/w/x.sh", nil}, // directly in the root: the root is a mount already
		{"/w/a/b/x.sh", []string{"/w/a/b", "/w/a"}}, // every directory between
		{"/app_backup/x.sh", nil},                   // not inside /app
		{"/opt/scripts/x.sh", nil},                  // outside the roots: read-only anyway
		{"/w/a/../b/x.sh", []string{"/w/b"}},        // cleaned
		{"/app/deep/er/x.sh", []string{"/app/deep/er", "/app/deep"}},
	} {
		got := PinAnchors([]sandbox.Pin{{Path: tc.pin}}, roots)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PinAnchors(%q) = %q, want %q", tc.pin, got, tc.want)
		}
	}
}

// Anchors of pins and of repositories are bound parents first, before any
// read-only bind: a later bind of a parent would uncover what is below it.
func TestAnchorOrder(t *testing.T) {
	t.Parallel()
	spec := &sandbox.Spec{Dir: "/w", WorkspaceRoots: []string{"/w"}, InitPath: "/gh",
		Pins: []sandbox.Pin{{Path: "/w/p/.git/hooks/x.sh", Source: "/pins/0"}, {Path: "/w/p/tools/y.sh", Source: "/pins/1"}}}
	m := &Mounts{Anchors: []string{"/w/p/.git"}, ProtectDirs: []string{"/w/p/.git/hooks"}}
	a := strings.Join(Args(spec, m, Options{}), " ")
	order := []string{"--bind /w /w", "--bind /w/p /w/p", "--bind /w/p/.git /w/p/.git", "--bind /w/p/.git/hooks /w/p/.git/hooks",
		"--bind /w/p/tools /w/p/tools", "--ro-bind /w/p/.git/hooks /w/p/.git/hooks", "--ro-bind /pins/0 /w/p/.git/hooks/x.sh"}
	last := -1
	for _, s := range order {
		i := strings.Index(a, s)
		if i < 0 || i < last {
			t.Fatalf("%q missing or out of order in %s", s, a)
		}
		last = i
	}
	if strings.Count(a, "--bind /w/p /w/p") != 1 {
		t.Errorf("an anchor is bound twice: %s", a)
	}
}
