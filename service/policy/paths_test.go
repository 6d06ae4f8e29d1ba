package policy

import (
	"path/filepath"
	"testing"
)

func TestPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, goos, home, xdg string
		fn                    func(goos, home, xdg string) string
		want                  string
	}{
		{"user linux", "linux", "/home/u", "", UserConfigPath, "/home/u/.config/gatehouse/config.yaml"},
		{"user linux xdg", "linux", "/home/u", "/xdg/cfg", UserConfigPath, "/xdg/cfg/gatehouse/config.yaml"},
		{"user linux relative xdg ignored", "linux", "/home/u", "cfg", UserConfigPath, "/home/u/.config/gatehouse/config.yaml"},
		{"user darwin", "darwin", "/Users/u", "/xdg/cfg", UserConfigPath, "/Users/u/Library/Application Support/Gatehouse/config.yaml"},
		{"user freebsd", "freebsd", "/home/u", "", UserConfigPath, "/home/u/.config/gatehouse/config.yaml"},
		{"config dir linux", "linux", "/home/u", "", ConfigDir, "/home/u/.config/gatehouse"},
		{"config dir darwin", "darwin", "/Users/u", "", ConfigDir, "/Users/u/Library/Application Support/Gatehouse"},
		{"state linux", "linux", "/home/u", "", StateDir, "/home/u/.local/state/gatehouse"},
		{"state linux xdg", "linux", "/home/u", "/xdg/state", StateDir, "/xdg/state/gatehouse"},
		{"state linux relative xdg ignored", "linux", "/home/u", "state", StateDir, "/home/u/.local/state/gatehouse"},
		{"state darwin", "darwin", "/Users/u", "/xdg/state", StateDir, "/Users/u/Library/Application Support/Gatehouse"},
		{"managed linux", "linux", "", "", func(goos, _, _ string) string { return ManagedConfigPath(goos) }, "/etc/gatehouse/managed.yaml"},
		{"managed darwin", "darwin", "", "", func(goos, _, _ string) string { return ManagedConfigPath(goos) }, "/Library/Application Support/Gatehouse/managed.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := filepath.ToSlash(tt.fn(tt.goos, tt.home, tt.xdg)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultLoadOptions(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_CONFIG_HOME": "/xdg"}
	got := DefaultLoadOptions("linux", "/home/u", func(k string) string { return env[k] })
	want := LoadOptions{UserFile: "/xdg/gatehouse/config.yaml", ManagedFile: "/etc/gatehouse/managed.yaml", Home: "/home/u",
		SavedRulesFile: "/home/u/.local/state/gatehouse/rules.yaml"}
	got.UserFile = filepath.ToSlash(got.UserFile)
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestExpandHome(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, home, want string }{
		{"~", "/home/u", "/home/u"},
		{"~/", "/home/u", "/home/u"},
		{"~/src", "/home/u", "/home/u/src"},
		{"~/src/../x", "/home/u", "/home/u/x"},
		{"~bob/src", "/home/u", "~bob/src"},
		{"/a/~/b", "/home/u", "/a/~/b"},
		{"src/~", "/home/u", "src/~"},
		{"~/src", "", "~/src"},
		{"/abs", "/home/u", "/abs"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := expandHome(tt.in, tt.home); got != tt.want {
				t.Errorf("expandHome(%q, %q): got %q, want %q", tt.in, tt.home, got, tt.want)
			}
		})
	}
}
