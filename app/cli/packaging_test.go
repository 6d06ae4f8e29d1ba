package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// The tray's start at login, as the packages install it, is what
// 'gatehouse install' writes for a gatehouse in /usr/bin (the .deb and
// .rpm) or /usr/local/bin (Homebrew's LaunchAgent, rewritten to its
// prefix by the formula): the files in packaging/ are these rendered, and
// go test -update writes them again.
func TestPackagedTrayAutostart(t *testing.T) {
	for _, tc := range []struct {
		file, goos, exe string
	}{
		{"xdg/gatehouse-tray.desktop", "linux", "/usr/bin/gatehouse"},
		{"launchd/dev.gatehouse.tray.plist", "darwin", "/usr/local/bin/gatehouse"},
	} {
		_, want := trayAutostart(tc.goos, "/home/u", "", tc.exe)
		path := filepath.Join("..", "..", "packaging", tc.file)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from what 'gatehouse install' writes (go test -update):\n%s", path, want)
		}
	}
}
