package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// The names change no byte of the wire or of the audit chain.
func TestDecisionOnTheWire(t *testing.T) {
	b, err := json.Marshal(Event{Decision: DecisionDeny})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"decision":"deny"`) {
		t.Errorf("event: %s", b)
	}
	var r DecideResponse
	if err := json.Unmarshal([]byte(`{"decision":"allow"}`), &r); err != nil || r.Decision != DecisionAllow {
		t.Errorf("decide response: %+v, %v", r, err)
	}
}
