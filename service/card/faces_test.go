package card_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/card"
	"github.com/gatehouse-dev/gatehouse/service/card/cardtest"
)

// faces are the card goldens of every face that renders the card: how a
// case's section starts, and how a field's label shows.
var faces = []struct {
	path    string
	section *regexp.Regexp
	label   *regexp.Regexp
}{
	{"../../app/cli/testdata/card.golden", regexp.MustCompile(`(?m)^=== (.+)$`), regexp.MustCompile(`(?m)^([a-z][a-z0-9 ]*):[ \t]`)},
	{"../../app/tray/testdata/card.golden", regexp.MustCompile(`(?m)^=== (.+)$`), regexp.MustCompile(`(?m)^([a-z][a-z0-9 ]*): `)},
	{"../dashboard/testdata/card.golden", regexp.MustCompile(`(?m)^<!-- (.+) -->`), regexp.MustCompile(`<dt>([^<]*)</dt>`)},
	{"../../app/cli/testdata/mcp_card.golden", regexp.MustCompile(`(?m)^=== (.+)$`), regexp.MustCompile(`"label": "([^"]*)"`)},
}

// Every face's golden, fed the same events, shows the same fields in the
// same order: the card's. The kept output (after the fields, in the
// faces that have it) is not a field.
func TestFacesCarryTheSameFields(t *testing.T) {
	t.Parallel()
	want := map[string][]string{}
	for _, tc := range cardtest.Cases() {
		c := card.Build(tc.In)
		want[tc.Name] = c.Labels()
	}
	for _, f := range faces {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		idx := f.section.FindAllStringSubmatchIndex(text, -1)
		if len(idx) != len(want) {
			t.Errorf("%s: %d cases, want %d", f.path, len(idx), len(want))
		}
		for i, m := range idx {
			name := text[m[2]:m[3]]
			end := len(text)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			body := text[m[1]:end]
			if k := strings.Index(body, "\n\n--- "); k >= 0 { // the kept output
				body = body[:k]
			}
			var got []string
			for _, l := range f.label.FindAllStringSubmatch(body, -1) {
				got = append(got, l[1])
			}
			if !slices.Equal(got, want[name]) {
				t.Errorf("%s: %s: fields\n%q\nwant the card's\n%q", f.path, name, got, want[name])
			}
		}
	}
}
