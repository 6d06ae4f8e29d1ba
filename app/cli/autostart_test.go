package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestTrayAutostart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, goos, xdg, exe string
		file                 string
		holds                []string
	}{
		{"linux", "linux", "", "/usr/bin/gatehouse", "/home/u/.config/autostart/gatehouse-tray.desktop",
			[]string{"[Desktop Entry]\n", "\nType=Application\n", "\nExec=/usr/bin/gatehouse tray\n"}},
		{"XDG_CONFIG_HOME", "linux", "/x/config", "/usr/bin/gatehouse", "/x/config/autostart/gatehouse-tray.desktop", nil},
		{"relative XDG_CONFIG_HOME", "freebsd", "config", "/usr/bin/gatehouse", "/home/u/.config/autostart/gatehouse-tray.desktop", nil},
		{"a path to quote", "linux", "", `/opt/my apps/50%/ga"te$house`, "/home/u/.config/autostart/gatehouse-tray.desktop",
			[]string{`Exec="/opt/my apps/50%%/ga\\"te\\$house" tray` + "\n"}},
		{"darwin", "darwin", "/x/config", "/Applications/G & H/gatehouse", "/home/u/Library/LaunchAgents/dev.gatehouse.tray.plist",
			[]string{"<string>dev.gatehouse.tray</string>", "<string>/Applications/G &amp; H/gatehouse</string>\n\t\t<string>tray</string>", "<key>RunAtLoad</key>\n\t<true/>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file, content := trayAutostart(tc.goos, "/home/u", tc.xdg, tc.exe)
			if file != tc.file {
				t.Errorf("file %s, want %s", file, tc.file)
			}
			for _, h := range tc.holds {
				if !bytes.Contains(content, []byte(h)) {
					t.Errorf("content does not hold %q:\n%s", h, content)
				}
			}
		})
	}
	if file, _ := trayAutostart("windows", `C:\Users\u`, "", `C:\gatehouse.exe`); file != "" {
		t.Errorf("windows: %s, want none", file)
	}
}

// install adds the tray's start at login once, --no-tray leaves it out,
// and uninstall removes it.
func TestInstallTrayAutostart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no tray start at login on windows")
	}
	home := t.TempDir()
	vars := map[string]string{
		"HOME":              home,
		"CLAUDE_CONFIG_DIR": filepath.Join(home, "claude"),
		"XDG_CONFIG_HOME":   filepath.Join(home, "config"),
	}
	run1 := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return vars[k] }}
		if code := run(context.Background(), env, args); code != ExitOK {
			t.Fatalf("gatehouse %s: exit %d\n%s%s", strings.Join(args, " "), code, &out, &errOut)
		}
		return out.String()
	}
	file, want := trayAutostart(runtime.GOOS, home, vars["XDG_CONFIG_HOME"], mustSelfPath(t))

	run1("install", "--no-service", "--no-tray")
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("--no-tray wrote %s", file)
	}
	if out := run1("install", "--no-service"); !strings.Contains(out, file+": the tray starts at login") {
		t.Errorf("install said:\n%s", out)
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s (%v):\n%s\nwant:\n%s", file, err, got, want)
	}
	if out := run1("install", "--no-service"); !strings.Contains(out, file+": the tray already starts at login") {
		t.Errorf("a second install said:\n%s", out)
	}
	if out := run1("uninstall", "--keep-service"); !strings.Contains(out, file+": the tray no longer starts at login") {
		t.Errorf("uninstall said:\n%s", out)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("uninstall left %s", file)
	}
	if out := run1("uninstall", "--keep-service"); !strings.Contains(out, "no tray start at login to remove") {
		t.Errorf("a second uninstall said:\n%s", out)
	}
}

func mustSelfPath(t *testing.T) string {
	t.Helper()
	exe, err := selfPath()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
