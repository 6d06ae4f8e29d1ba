package notify

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/godbus/dbus/v5"

	"github.com/gatehouse-dev/gatehouse/service/termesc"
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

// forServer returns body as the session's notification server should get
// it: with &, < and > as entities when the server reads bodies as markup
// (body-markup), or when it cannot be asked, since an entity shown as
// written is harmless and markup that acts is not.
func forServer(body string) string {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return termesc.Markup(body)
	}
	defer conn.Close()
	var caps []string
	if err := conn.Object(fdoName, fdoPath).Call(fdoIface+".GetCapabilities", 0).Store(&caps); err != nil || slices.Contains(caps, "body-markup") {
		return termesc.Markup(body)
	}
	return body
}
