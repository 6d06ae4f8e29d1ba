package approvals

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// loopbackHold is an egress hold for the host's loopback at 127.0.0.1:port.
func loopbackHold(session string) *Hold {
	h := egressHold(session, "127.0.0.1")
	h.Request.Port, h.Request.SaveEntry = 8765, "127.0.0.1:8765"
	h.Request.Literal, h.Request.HostLoopback = true, true
	return h
}

// A request about the host's loopback is approved only with the
// local-service tick: an approving answer without it is refused with the
// box named, and the request stays pending; with it, the outcome says so.
// The tick on any other request is refused. Deny needs no tick. A session
// grant made with the tick answers the session's next request about the
// same destination, with the tick.
func TestEgressHostLoopbackNeedsTheBox(t *testing.T) {
	t.Parallel()
	var saved []string
	b := New(Options{SaveEgress: func(entry string, allow bool) (string, error) {
		saved = append(saved, entry)
		return "/state/rules.yaml", nil
	}})
	a, out := start(t, b, loopbackHold("s1"))
	if got := strings.Join(a.Answers, " "); got != "once session always deny deny_always" || len(a.Entries) != 0 {
		t.Errorf("answers %q, entries %q", got, a.Entries)
	}
	for _, ans := range []string{api.AnswerOnce, api.AnswerSession, api.AnswerAlways} {
		_, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: ans, By: api.ByCLI})
		if err == nil || !strings.Contains(err.Error(), `a service on this machine (the host's loopback, outside the sandbox): approving it needs the box "this is a service on my machine" ticked (gatehouse approve `+a.ID+` --local-service)`) {
			t.Errorf("%s without the box: %v", ans, err)
		}
	}
	if got := b.Pending(); len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("pending %v, want the request still there", got)
	}
	if len(saved) != 0 {
		t.Errorf("saved %v without the box", saved)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerSession, LocalService: true, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || !o.LocalService || o.Record.Answer != api.AnswerSession {
		t.Errorf("outcome %+v", o)
	}
	if o := b.Hold(context.Background(), loopbackHold("s1")); !o.Approved || !o.LocalService || o.Record.By != BySession {
		t.Errorf("the session's next: %+v", o)
	}

	// Always with the box saves the exact literal.
	a, out = start(t, b, loopbackHold(""))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerAlways, LocalService: true, By: api.ByDashboard}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || !o.LocalService || o.Record.SavedEntry != "127.0.0.1:8765" || !slices.Equal(saved, []string{"127.0.0.1:8765"}) {
		t.Errorf("always: %+v, saved %v", o, saved)
	}
	// Deny needs no box.
	a, out = start(t, b, loopbackHold(""))
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByNotification}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); o.Approved || o.LocalService {
		t.Errorf("deny: %+v", o)
	}

	// The tick on a request about anything else is refused.
	a, out = start(t, b, egressHold("", "registry.npmjs.org"))
	for _, ans := range []string{api.AnswerOnce, api.AnswerDeny} {
		if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: ans, LocalService: true, By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), "is not about a service on this machine") {
			t.Errorf("%s with the box on a name: %v", ans, err)
		}
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerOnce, By: api.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, out); !o.Approved || o.LocalService {
		t.Errorf("once on a name: %+v", o)
	}
}

// The broker fills an egress request's Entries: the *.domain picks, each
// of which always accepts (wildcardFor), widest last; none for an IP
// address or localhost.
func TestEgressEntries(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	for _, tc := range []struct {
		host    string
		literal bool
		want    []string
	}{
		{"a.b.npmjs.org", false, []string{"*.b.npmjs.org:443", "*.npmjs.org:443"}},
		{"registry.npmjs.org", false, []string{"*.npmjs.org:443"}},
		{"localhost", false, nil},
		{"203.0.113.7", true, nil},
	} {
		h := egressHold("", tc.host)
		h.Request.Literal = tc.literal
		a, _ := start(t, b, h)
		if !slices.Equal(a.Entries, tc.want) {
			t.Errorf("%s: entries %q, want %q", tc.host, a.Entries, tc.want)
		}
		if got := b.Pending(); !slices.Equal(got[len(got)-1].Entries, tc.want) {
			t.Errorf("%s: listed entries %q", tc.host, got[len(got)-1].Entries)
		}
		for _, e := range a.Entries {
			if err := wildcardFor(e, a); err != nil {
				t.Errorf("%s: offered %s, which always refuses: %v", tc.host, e, err)
			}
		}
		b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI})
	}
}

// A request for one of a preset's hosts offers the preset answer when it
// names the agent to save it for; the answer saves the preset for that
// agent, runs the call, and the record says preset with what was saved
// and where. No agent, no preset answer.
func TestEgressPresetAnswer(t *testing.T) {
	t.Parallel()
	var calls []string
	b := New(Options{SavePreset: func(name, agent string) (string, []string, error) {
		calls = append(calls, name+" for "+agent)
		if name == "broken" {
			return "", nil, fmt.Errorf("disk full")
		}
		return "/state/rules.yaml", []string{"pypi.org:443", "files.pythonhosted.org:443"}, nil
	}})
	h := egressHold("s1", "pypi.org")
	h.Request.Preset, h.PresetAgent = "pypi", "claude-code"
	a, out := start(t, b, h)
	if got := strings.Join(a.Answers, " "); got != "once session always preset deny deny_always" {
		t.Errorf("answers %q", got)
	}
	resp, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerPreset, By: api.ByTray})
	if err != nil || !resp.OK || resp.SavedEntry != "pypi.org:443, files.pythonhosted.org:443" || resp.SavedFile != "/state/rules.yaml" {
		t.Errorf("answer: %+v %v", resp, err)
	}
	o := outcome(t, out)
	if !o.Approved || o.Record.Answer != api.AnswerPreset || o.Record.By != api.ByTray || o.Record.SavedEntry != "pypi.org:443, files.pythonhosted.org:443" || o.Record.SavedFile != "/state/rules.yaml" {
		t.Errorf("outcome %+v", o)
	}
	if !slices.Equal(calls, []string{"pypi for claude-code"}) {
		t.Errorf("saved %v", calls)
	}

	// A failed save refuses the answer; the request stays.
	h = egressHold("", "pypi.org")
	h.Request.Preset, h.PresetAgent = "broken", "cli"
	a, out = start(t, b, h)
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerPreset, By: api.ByCLI}); err == nil || !strings.Contains(err.Error(), "saving preset broken for cli: disk full") {
		t.Errorf("failed save: %v", err)
	}
	b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerDeny, By: api.ByCLI})
	outcome(t, out)

	h = egressHold("", "pypi.org")
	h.Request.Preset = "pypi"
	a, _ = start(t, b, h)
	if slices.Contains(a.Answers, api.AnswerPreset) {
		t.Errorf("no agent, answers %v", a.Answers)
	}
	if _, err := b.Answer(api.AnswerRequest{ID: a.ID, Answer: api.AnswerPreset, By: api.ByCLI}); err == nil {
		t.Error("preset taken though not offered")
	}
}
