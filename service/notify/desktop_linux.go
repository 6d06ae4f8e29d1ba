package notify

import (
	"errors"
	"os"
	"path/filepath"
)

// checkSession fails fast where there is no session bus: beeep would
// otherwise try to autolaunch one, then notify-send, then kdialog.
func checkSession() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		if _, err := os.Stat(filepath.Join(rt, "bus")); err == nil {
			return nil
		}
	}
	return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset): notifications need a desktop session")
}
