package notify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/notify/notifytest"
)

// TestDesktop shows notifications on a real notification server (dunst on
// a private session bus, in make test) and reads them back.
func TestDesktop(t *testing.T) {
	notifytest.Require(t)
	agent := fmt.Sprintf("notify-test-%d", time.Now().UnixNano())
	n := New(Options{SandboxDegraded: true, OutputRedacted: true})

	d := degraded
	d.Agent = agent
	if !n.SandboxDegraded(d) {
		t.Fatal("degraded notification not sent")
	}
	if !n.OutputRedacted(agent, []string{"github_token"}, 2) {
		t.Fatal("redaction notification not sent")
	}
	// The same again within the hour: nothing new on screen.
	n.SandboxDegraded(d)
	n.OutputRedacted(agent, []string{"github_token"}, 1)

	shown, err := notifytest.History()
	if err != nil {
		t.Fatal(err)
	}
	var mine []notifytest.Shown
	for _, s := range shown {
		if strings.Contains(s.Summary, agent) {
			mine = append(mine, s)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("%d notifications for %s, want 2: %+v", len(mine), agent, mine)
	}
	// Newest first.
	red, deg := mine[0], mine[1]
	if deg.AppName != AppName || deg.Summary != "Sandbox degraded: "+agent+" ran a command with no isolation" ||
		!strings.Contains(deg.Body, "Requested backend: auto") || !strings.Contains(deg.Body, "Host: bubblewrap unusable") {
		t.Errorf("degraded notification: %+v", deg)
	}
	if red.Summary != "Credential redacted from "+agent+"'s output" || !strings.Contains(red.Body, "github_token") {
		t.Errorf("redaction notification: %+v", red)
	}
}
