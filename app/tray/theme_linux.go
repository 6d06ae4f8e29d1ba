package tray

import (
	"context"
	"time"

	"github.com/godbus/dbus/v5"
)

// desktopPrefersDark asks the desktop portal for the colour scheme the
// user chose (org.freedesktop.appearance color-scheme: 1 prefers dark, 2
// light). Where no portal answers it takes dark, as most panels are.
func desktopPrefersDark(ctx context.Context) bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var v dbus.Variant
	err = conn.Object("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop").
		CallWithContext(ctx, "org.freedesktop.portal.Settings.ReadOne", 0, "org.freedesktop.appearance", "color-scheme").Store(&v)
	if err != nil {
		return true
	}
	scheme, ok := v.Value().(uint32)
	return !ok || scheme != 2
}
