package card_test

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

// The destinations a command reached are a row of their own: an ssh
// tunnel is attributed to its host as any other connection.
func TestBuildEgressAllowedHosts(t *testing.T) {
	t.Parallel()
	in := cardtest.Cases()[0].In
	in.Event.Egress.Allowed, in.Event.Egress.AllowedHosts = 3, []string{"github.com:22", "[2001:db8::7]:443"}
	var got []string
	for _, f := range card.Build(in).Fields {
		if f.Key == "allowed_hosts" {
			got = append(got, f.Value)
		}
	}
	if len(got) != 1 || got[0] != "github.com:22, [2001:db8::7]:443" {
		t.Errorf("allowed_hosts rows %q", got)
	}
	in.Event.Egress.AllowedHosts = nil
	for _, f := range card.Build(in).Fields {
		if f.Key == "allowed_hosts" {
			t.Errorf("a row without hosts: %q", f.Value)
		}
	}
}
