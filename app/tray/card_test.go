package tray

import (
	"flag"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

var update = flag.Bool("update", false, "rewrite testdata/card.golden")

// The tray's card is the card's fields, in its order, every value escaped.
func TestCard(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, tc := range cardtest.Cases() {
		title, body := Card(tc.In.Event, cardtest.Now)
		in := card.Input{Event: tc.In.Event, Loc: cardtest.Now.Location()}
		cardtest.CheckOrder(t, tc.Name, body, card.Build(in), func(f card.Field) string { return f.Label + ":" })
		all.WriteString("=== " + tc.Name + "\n" + title + "\n" + body + "\n\n")
	}
	cardtest.Golden(t, "card.golden", all.String(), *update)

	ev := cardtest.Cases()[0].In.Event
	ev.Egress.DeniedHosts = []string{"evil.example\x1b[2K"}
	if _, body := Card(ev, cardtest.Now); !strings.Contains(body, `evil.example\x1b[2K`) {
		t.Errorf("a control in the event is not escaped:\n%s", body)
	}
}
