package tray

import (
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
)

// Card is an execution's card (its audit event, service/card) that a
// click on a recent execution shows as a notification: the card's
// fields, one a line, every value escaped, its times in now's zone,
// then how to see the kept output.
func Card(ev api.Event, now time.Time) (title, body string) {
	title = "Gatehouse: " + Glyph(ev) + " " + Shorten(CommandOf(ev), commandWidth)
	c := card.Build(card.Input{Event: ev, Loc: now.Location()})
	var b strings.Builder
	c.WriteText(&b, Escape, false)
	fmt.Fprintf(&b, "gatehouse audit show %s shows the kept output", Escape(ev.ID))
	return title, b.String()
}
