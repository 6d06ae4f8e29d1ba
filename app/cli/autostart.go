package cli

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The tray's start at login, which 'gatehouse install' adds and
// 'gatehouse uninstall' removes: an XDG autostart entry on Linux and the
// other freedesktop systems, a LaunchAgent on macOS.

// trayAgentLabel is the tray's LaunchAgent (the service's is
// dev.gatehouse.agent).
const trayAgentLabel = "dev.gatehouse.tray"

// trayAutostart returns the file that starts 'exe tray' at login, and its
// content; "" where the platform has none. xdgConfigHome is used when it
// is absolute, as the XDG Base Directory specification requires.
func trayAutostart(goos, home, xdgConfigHome, exe string) (file string, content []byte) {
	switch goos {
	case "windows":
		return "", nil
	case "darwin":
		return filepath.Join(home, "Library", "LaunchAgents", trayAgentLabel+".plist"), trayPlist(exe)
	}
	config := filepath.Join(home, ".config")
	if xdgConfigHome != "" && filepath.IsAbs(xdgConfigHome) {
		config = xdgConfigHome
	}
	return filepath.Join(config, "autostart", "gatehouse-tray.desktop"), trayDesktopEntry(exe)
}

// trayDesktopEntry is the autostart entry (Desktop Entry Specification).
func trayDesktopEntry(exe string) []byte {
	return []byte(`[Desktop Entry]
Type=Application
Name=Gatehouse
Comment=Gatehouse in the menu bar: the sandbox at a glance, approvals, recent executions
Exec=` + desktopExecArg(exe) + ` tray
Icon=gatehouse
Terminal=false
Categories=Utility;
X-GNOME-Autostart-enabled=true
`)
}

// desktopExecArg is one argument of an Exec key: quoted when it holds a
// reserved character, with ", `, $ and \ escaped inside the quotes, then
// as a string value (backslashes doubled, % as %%).
func desktopExecArg(arg string) string {
	if strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`") {
		arg = `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`).Replace(arg) + `"`
	}
	return strings.NewReplacer(`\`, `\\`, "%", "%%", "\n", `\n`).Replace(arg)
}

// trayPlist is the tray's LaunchAgent: started at login, in the user's
// graphical session only.
func trayPlist(exe string) []byte {
	var esc bytes.Buffer
	xml.EscapeText(&esc, []byte(exe))
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + trayAgentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc.String() + `</string>
		<string>tray</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
	<key>LimitLoadToSessionType</key>
	<string>Aqua</string>
</dict>
</plist>
`)
}

// installTrayAutostart writes the tray's start at login, unless it is
// already there as it should be.
func installTrayAutostart(env *Env, goos, home, exe string) error {
	file, content := trayAutostart(goos, home, env.Getenv("XDG_CONFIG_HOME"), exe)
	if file == "" {
		return nil
	}
	if old, err := readOptional(file); err != nil {
		return err
	} else if bytes.Equal(old, content) {
		fmt.Fprintf(env.Stdout, "%s: the tray already starts at login\n", file)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("adding the tray's start at login: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".gatehouse-tray-*")
	if err != nil {
		return fmt.Errorf("adding the tray's start at login: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return fmt.Errorf("adding the tray's start at login: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s: the tray starts at login (run 'gatehouse tray' to start it now)\n", file)
	return nil
}

// removeTrayAutostart removes the tray's start at login, when present.
func removeTrayAutostart(env *Env, goos, home string) error {
	file, _ := trayAutostart(goos, home, env.Getenv("XDG_CONFIG_HOME"), "")
	if file == "" {
		return nil
	}
	err := os.Remove(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(env.Stdout, "%s: no tray start at login to remove\n", file)
		return nil
	case err != nil:
		return fmt.Errorf("removing the tray's start at login: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s: the tray no longer starts at login\n", file)
	return nil
}
