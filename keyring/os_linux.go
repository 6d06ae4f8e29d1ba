package keyring

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	dbus "github.com/godbus/dbus/v5"
)

// The Secret Service on the session bus (freedesktop.org Secret Service
// API), as go-keyring uses it: the "login" collection when there is one,
// else the "default" alias.
const (
	secretsName     = "org.freedesktop.secrets"
	secretsPath     = "/org/freedesktop/secrets"
	secretsIface    = "org.freedesktop.Secret.Service"
	collectionIface = "org.freedesktop.Secret.Collection"
	itemIface       = "org.freedesktop.Secret.Item"
	loginPath       = "/org/freedesktop/secrets/collection/login"
)

const headlessHint = "run inside a desktop session, or start one: dbus-run-session -- sh -c 'echo -n PASSWORD | gnome-keyring-daemon --unlock --components=secrets; exec gatehouse ...'"

// sessionBus connects to the session bus without autolaunching one.
func sessionBus() (*dbus.Conn, error) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		rt := os.Getenv("XDG_RUNTIME_DIR")
		if rt == "" {
			return nil, &UnavailableError{Cause: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset)", Hint: headlessHint}
		}
		if _, err := os.Stat(filepath.Join(rt, "bus")); err != nil {
			return nil, &UnavailableError{Cause: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and " + filepath.Join(rt, "bus") + " does not exist)", Hint: headlessHint}
		}
	}
	conn, err := dbus.SessionBus()
	if err != nil {
		return nil, &UnavailableError{Cause: "cannot connect to the D-Bus session bus: " + err.Error(), Hint: headlessHint}
	}
	return conn, nil
}

// preflight checks that the Secret Service can answer without a prompt and
// returns nil when it can.
func preflight(ctx context.Context) error {
	_, _, err := loginCollection(ctx)
	return err
}

// loginCollection returns the collection go-keyring uses, after checking
// that it exists and is unlocked.
func loginCollection(ctx context.Context) (*dbus.Conn, dbus.BusObject, error) {
	conn, err := sessionBus()
	if err != nil {
		return nil, nil, err
	}
	bus := conn.BusObject()
	var has bool
	if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, secretsName).Store(&has); err != nil {
		return nil, nil, &UnavailableError{Cause: "the D-Bus session bus does not answer: " + dbusName(err), Hint: headlessHint}
	}
	if !has {
		var names []string
		bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names)
		if !slices.Contains(names, secretsName) {
			return nil, nil, &UnavailableError{
				Cause: "no Secret Service on the D-Bus session bus",
				Hint:  "install and start one (Debian/Ubuntu: apt install gnome-keyring; or enable KeePassXC's Secret Service integration)",
			}
		}
	}
	svc := conn.Object(secretsName, secretsPath)
	var cols []dbus.ObjectPath
	if err := getProperty(ctx, svc, secretsIface, "Collections", &cols); err != nil {
		return nil, nil, &UnavailableError{Cause: "the Secret Service does not answer: " + dbusName(err), Hint: "restart it (gnome-keyring-daemon --replace)"}
	}
	path := dbus.ObjectPath(loginPath)
	if !slices.Contains(cols, path) {
		if err := svc.CallWithContext(ctx, secretsIface+".ReadAlias", 0, "default").Store(&path); err != nil || path == "/" {
			return nil, nil, &UnavailableError{
				Cause: "the Secret Service has no login keyring",
				Hint:  "create one: log in to the desktop, open Passwords and Keys (seahorse), or run: echo -n PASSWORD | gnome-keyring-daemon --unlock",
			}
		}
	}
	col := conn.Object(secretsName, path)
	var locked bool
	if err := getProperty(ctx, col, collectionIface, "Locked", &locked); err != nil {
		return nil, nil, &UnavailableError{Cause: "the Secret Service does not answer: " + dbusName(err), Hint: "restart it (gnome-keyring-daemon --replace)"}
	}
	if locked {
		return nil, nil, &UnavailableError{
			Cause: "the login keyring (" + string(path) + ") is locked",
			Hint:  "unlock it: log in to the desktop session, open Passwords and Keys (seahorse), or run: echo -n PASSWORD | gnome-keyring-daemon --unlock",
		}
	}
	return conn, col, nil
}

func getProperty(ctx context.Context, obj dbus.BusObject, iface, prop string, into any) error {
	var v dbus.Variant
	if err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, iface, prop).Store(&v); err != nil {
		return err
	}
	return v.Store(into)
}

// list returns the usernames of the service's items in the login
// collection.
func (s *OS) list(ctx context.Context) ([]string, error) {
	conn, col, err := loginCollection(ctx)
	if err != nil {
		return nil, err
	}
	var items []dbus.ObjectPath
	if err := col.CallWithContext(ctx, collectionIface+".SearchItems", 0, map[string]string{"service": s.service}).Store(&items); err != nil {
		return nil, err
	}
	var names []string
	for _, it := range items {
		var attrs map[string]string
		if err := getProperty(ctx, conn.Object(secretsName, it), itemIface, "Attributes", &attrs); err != nil {
			return nil, err
		}
		if u, ok := attrs["username"]; ok && !slices.Contains(names, u) {
			names = append(names, u)
		}
	}
	slices.Sort(names)
	return names, nil
}

func dbusName(err error) string {
	var de dbus.Error
	if errors.As(err, &de) {
		return de.Name
	}
	var dp *dbus.Error
	if errors.As(err, &dp) {
		return dp.Name
	}
	return err.Error()
}

func platformDescribe(err error) (string, bool) {
	var de dbus.Error
	if errors.As(err, &de) {
		return "the Secret Service answered " + de.Name, true
	}
	var dp *dbus.Error
	if errors.As(err, &dp) {
		return "the Secret Service answered " + dp.Name, true
	}
	return "", false
}
