package card_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

func exit(n int) *int { return &n }

// One mark per way an event ends; nothing marks a decision no stage makes.
func TestMarkOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev           api.Event
		glyph, class string
	}{
		{api.Event{Decision: "allow"}, "▶", "ok"},
		{api.Event{Decision: "allow", Routed: true}, "↪", "ok"},
		{api.Event{Decision: "allow", Status: "completed", ExitCode: exit(0)}, "✓", "ok"},
		{api.Event{Decision: "allow", Status: "completed", ExitCode: exit(2)}, "✗", "warn"},
		{api.Event{Decision: "allow", Status: "timed_out"}, "⏱", "warn"},
		{api.Event{Decision: "allow", Status: "killed"}, "✗", "bad"},
		{api.Event{Decision: "allow", Status: "failed_to_start"}, "✗", "bad"},
		{api.Event{Decision: "allow", Status: "never_ran"}, "✗", "bad"},
		{api.Event{Decision: "deny", Status: "never_ran"}, "⊘", "bad"},
	} {
		if m := card.MarkOf(&tc.ev); m.Glyph != tc.glyph || m.Class != tc.class {
			t.Errorf("MarkOf(%+v) = %+v, want %s %s", tc.ev, m, tc.glyph, tc.class)
		}
	}
}

// The card carries what each face used to leave out: the approval, the
// read posture, the masked credentials, and each limit's gap.
func TestBuild(t *testing.T) {
	t.Parallel()
	byName := map[string]card.Card{}
	for _, tc := range cardtest.Cases() {
		byName[tc.Name] = card.Build(tc.In)
	}
	has := func(name, key, value string) {
		t.Helper()
		c := byName[name]
		i := slices.IndexFunc(c.Fields, func(f card.Field) bool { return f.Key == key })
		if i < 0 || !strings.Contains(c.Fields[i].Value+" "+strings.Join(c.Fields[i].Notes, " "), value) {
			t.Errorf("%s: field %s lacks %q: %+v", name, key, value, c.Fields)
		}
	}
	has("held then approved", "approval", "once by tray after 5300 ms")
	has("held then approved", "approval", "held by ask-push")
	has("held then approved", "parent_id", "2222aaaa")
	has("held then approved", "network", "session s-1")
	has("held then approved", "network", "loopback shared with the session's other executions")
	has("read posture workspace", "read_posture", "workspace")
	has("masked credentials", "credentials_masked", "github_token (1 to its hosts, 0 elsewhere)")
	has("timed out", "limits_enforced", "memory not held: no cgroup v2")
	has("denied", "limits_enforced", "Gatehouse did not run this command")
	if s := byName["denied"].Streams; len(s) != 0 {
		t.Errorf("a denial that never ran lists streams: %+v", s)
	}
	if s := byName["completed"].Streams; len(s) != 1 || s[0].Name != "stdout" || !s[0].Kept {
		t.Errorf("completed: streams %+v, want stdout alone (stderr was empty)", s)
	}
	// The order is the card's, whatever the event holds.
	c := byName["held then approved"]
	labels := c.Labels()
	if i, j := slices.Index(labels, "approval"), slices.Index(labels, "command"); i < 0 || i > j {
		t.Errorf("labels %v: the approval comes before the command", labels)
	}
}

// Each egress answer a running command's connection got is a row of its
// card.
func TestBuildEgressApproved(t *testing.T) {
	t.Parallel()
	in := cardtest.Cases()[0].In
	in.Event.Egress.Approved = []api.EgressApproval{
		{Host: "registry.npmjs.org", Port: 443, Answer: api.AnswerOnce, By: api.ByCLI, ID: "6e50a7b2"},
		{Host: "2001:db8::7", Port: 80, Answer: api.AnswerSession, By: "session"},
	}
	var got []string
	for _, f := range card.Build(in).Fields {
		if f.Key == "egress_approved" {
			got = append(got, f.Value)
		}
	}
	if want := []string{"registry.npmjs.org:443: once by cli (approval 6e50a7b2)", "[2001:db8::7]:80: session by session"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}
