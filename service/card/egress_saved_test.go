package card

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// An egress answer that saved something (always, deny always, preset)
// says on the card what it saved and where.
func TestCardEgressSaved(t *testing.T) {
	ev := api.Event{ID: "e1", Egress: api.Egress{Approved: []api.EgressApproval{
		{Host: "registry.npmjs.org", Port: 443, Answer: api.AnswerPreset, By: api.ByCLI, ID: "ab12cd34",
			SavedEntry: "registry.npmjs.org:443", SavedFile: "/home/u/.local/state/gatehouse/rules.yaml"},
		{Host: "127.0.0.1", Port: 8765, Answer: api.AnswerOnce, By: api.ByTray, ID: "ef56ab78"},
	}}}
	var got []string
	for _, f := range Build(Input{Event: ev}).Fields {
		if f.Key == "egress_approved" {
			got = append(got, f.Value)
		}
	}
	want := []string{
		"registry.npmjs.org:443: preset by cli (approval ab12cd34), saved registry.npmjs.org:443 in /home/u/.local/state/gatehouse/rules.yaml",
		"127.0.0.1:8765: once by tray (approval ef56ab78)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}
