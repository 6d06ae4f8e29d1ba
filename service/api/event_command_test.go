package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// The judged text travels with copies of an event to the audit record and
// is never serialised with the event.
func TestEventCommandTravelsUnserialised(t *testing.T) {
	var ev Event
	ev.SetCommand("curl -H secret-ish example.test")
	cp := ev
	if cp.Command() != "curl -H secret-ish example.test" {
		t.Fatalf("copy carries %q", cp.Command())
	}
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "curl") {
		t.Errorf("event JSON carries the command: %s", b)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.Command() != "" {
		t.Errorf("read back: %q, %v", back.Command(), err)
	}
}
