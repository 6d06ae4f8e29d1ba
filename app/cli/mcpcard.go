package cli

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
)

// mcpCard is the card of a call's event (service/card) as the MCP tool's
// structured result carries it, times in UTC; nil without an event.
func mcpCard(ev *api.Event) []card.Field {
	if ev == nil {
		return nil
	}
	return card.Build(card.Input{Event: *ev, Command: ev.Command(), Loc: time.UTC}).Fields
}

// mcpCarded is the tool's structured result with the call's card.
type mcpCarded struct {
	mcpOutput
	Card []card.Field `json:"card,omitempty"`
}

// withCard adds the card of ev to out.
func withCard(out mcpOutput, ev *api.Event) mcpCarded {
	return mcpCarded{out, mcpCard(ev)}
}
