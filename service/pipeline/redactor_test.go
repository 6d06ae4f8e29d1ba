package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/dlp"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// Runs with no credential value share one redactor, made of the
// configured patterns; a change of the patterns is honoured at the next
// run, and a run with values gets a redactor of its own.
func TestRedactorKeptForPlainRuns(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	l, err := policy.Load(policy.LoadOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(&l.Config, Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ex.redactor(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := ex.redactor(nil); b != a {
		t.Error("a second plain run made a redactor of its own")
	}
	ex.cfg.Policy.DLPPatterns = map[string]string{"ticket": `TICKET-[0-9]{6}`}
	c, err := ex.redactor(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, n := c.RedactString("see TICKET-123456 now"); n != 1 || strings.Contains(got, "123456") {
		t.Errorf("after the patterns changed: %q (%d redactions), want the ticket redacted", got, n)
	}
	if got, n := a.RedactString("see TICKET-123456 now"); n != 0 {
		t.Errorf("the earlier redactor changed: %q (%d)", got, n)
	}
	secret := dlp.Secret{ID: "tok", Value: "s3cr3t-value-0123456789"}
	d, err := ex.redactor([]dlp.Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	if d == c {
		t.Error("a run with a credential value got the plain redactor")
	}
	if got, _ := d.RedactString("x " + secret.Value + " y"); strings.Contains(got, secret.Value) {
		t.Errorf("the value was not redacted: %q", got)
	}
	if got, _ := c.RedactString("x " + secret.Value + " y"); !strings.Contains(got, secret.Value) {
		t.Errorf("the plain redactor learnt a run's value: %q", got)
	}
}

// BenchmarkPlainRedactor is the redactor a run with no credential value
// gets: made anew ("new", as every run did) or kept ("kept").
func BenchmarkPlainRedactor(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	l, err := policy.Load(policy.LoadOptions{Home: home})
	if err != nil {
		b.Fatal(err)
	}
	ex, err := New(&l.Config, Options{Home: home})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			if _, err := dlp.New(nil, ex.cfg.DLP()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			if _, err := ex.redactor(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
