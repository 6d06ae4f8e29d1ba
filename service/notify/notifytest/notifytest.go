// Package notifytest reads back the notifications a real notification
// server showed, for tests run inside .ci/with-desktop-session.sh (dunst on
// a private D-Bus session bus).
package notifytest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Required reports whether REQUIRE_NOTIFY=1: a missing notification server
// fails tests instead of skipping them.
func Required() bool { return os.Getenv("REQUIRE_NOTIFY") == "1" }

// Available reports whether dunst answers on the session bus.
func Available() bool {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	return exec.Command("dunstctl", "debug").Run() == nil
}

// Require skips t when no dunst answers, or fails it under
// REQUIRE_NOTIFY=1.
func Require(t testing.TB) {
	t.Helper()
	if Available() {
		return
	}
	if Required() {
		t.Fatal("REQUIRE_NOTIFY=1 but dunst does not answer on the session bus; run under .ci/with-desktop-session.sh")
	}
	t.Skip("no notification server (dunst) on a session bus")
}

// A Shown notification.
type Shown struct {
	ID      int
	AppName string
	Summary string
	Body    string
}

// History closes every notification on screen (dunst keeps only closed
// ones in its history) and returns the history, newest first.
func History() ([]Shown, error) {
	if out, err := exec.Command("dunstctl", "close-all").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dunstctl close-all: %v: %s", err, out)
	}
	out, err := exec.Command("dunstctl", "history").Output()
	if err != nil {
		return nil, fmt.Errorf("dunstctl history: %v", err)
	}
	return parse(out)
}

func parse(out []byte) ([]Shown, error) {
	type field struct {
		Data json.RawMessage `json:"data"`
	}
	var h struct {
		Data [][]map[string]field `json:"data"`
	}
	if err := json.Unmarshal(out, &h); err != nil {
		return nil, fmt.Errorf("dunstctl history: %v", err)
	}
	var shown []Shown
	for _, group := range h.Data {
		for _, n := range group {
			var s Shown
			json.Unmarshal(n["id"].Data, &s.ID)
			json.Unmarshal(n["appname"].Data, &s.AppName)
			json.Unmarshal(n["summary"].Data, &s.Summary)
			json.Unmarshal(n["body"].Data, &s.Body)
			shown = append(shown, s)
		}
	}
	return shown, nil
}
