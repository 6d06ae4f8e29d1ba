package fspath

import "testing"

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/app", "/app", true},
		{"/app/x", "/app", true},
		{"/app/x/y", "/app/", true},
		{"/app/", "/app", true},
		{"/app_backup", "/app", false},
		{"/app_backup/x", "/app", false},
		{"/ap", "/app", false},
		{"/app/x/../../etc", "/app", false},
		{"/app/./x", "/app", true},
		{"/etc", "/", true},
		{"/", "/", true},
		{"relative", "/", false},
		{"", "/", false},
		{"/app", "", false},
		{"", "", false},
		{"/tmp", "/tmp/x", false},
	} {
		if got := Within(c.path, c.root); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}
