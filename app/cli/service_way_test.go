package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestChooseServiceWay(t *testing.T) {
	t.Parallel()
	noBus := func() error {
		return errors.New("'systemctl --user show-environment' failed: Failed to connect to bus")
	}
	userBus := func() error { return nil }
	for _, tc := range []struct {
		name, goos, value string
		probe             func() error
		way, why, err     string
	}{
		{"linux with systemd --user", "linux", "", userBus, waySystemd, "", ""},
		{"linux without a user bus", "linux", "", noBus, wayBackground, "no systemd --user: 'systemctl --user show-environment' failed: Failed to connect to bus", ""},
		{"auto spelled out", "linux", "auto", noBus, wayBackground, "no systemd --user: ", ""},
		{"forced background", "linux", "none", userBus, wayBackground, "GATEHOUSE_SERVICE_MANAGER=none", ""},
		{"forced systemd, not probed", "linux", "systemd", noBus, waySystemd, "", ""},
		{"macOS keeps launchd", "darwin", "", noBus, wayLaunchd, "", ""},
		{"macOS has no systemd", "darwin", "systemd", userBus, "", "", "there is no systemd on darwin"},
		{"macOS has no background way", "darwin", "none", userBus, "", "", "runs only on Linux"},
		{"launchd off macOS", "linux", "launchd", userBus, "", "", "launchd runs only on macOS"},
		{"unknown value", "linux", "upstart", userBus, "", "", `GATEHOUSE_SERVICE_MANAGER: "upstart" is not one of auto, systemd, launchd, none`},
		{"windows", "windows", "", userBus, "", "", "does not run on Windows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			way, why, err := chooseServiceWay(tc.goos, tc.value, tc.probe)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", way, err, tc.err)
				}
				return
			}
			if err != nil || way != tc.way || !strings.HasPrefix(why, tc.why) {
				t.Errorf("got %q, %q, %v; want %q, %q", way, why, err, tc.way, tc.why)
			}
		})
	}
}

// The autostart entry names the background way and quotes the binary.
func TestServiceDesktopEntry(t *testing.T) {
	t.Parallel()
	got := string(serviceDesktopEntry("/opt/my tools/gatehouse"))
	if want := "\nExec=env GATEHOUSE_SERVICE_MANAGER=none \"/opt/my tools/gatehouse\" service start\n"; !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant a line %q", got, want)
	}
	if got := serviceAutostartPath("/home/u", "relative"); got != "/home/u/.config/autostart/gatehouse-service.desktop" {
		t.Errorf("relative XDG_CONFIG_HOME: %s", got)
	}
	if got := serviceAutostartPath("/home/u", "/x"); got != "/x/autostart/gatehouse-service.desktop" {
		t.Errorf("XDG_CONFIG_HOME=/x: %s", got)
	}
}
