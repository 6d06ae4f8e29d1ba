package keyring

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
)

// preflight has nothing to check on macOS: a locked login keychain makes
// the security tool fail, which describe reports.
func preflight(context.Context) error { return nil }

// list reads the attributes (never the data) of the generic passwords in
// the user's keychains and keeps the accounts of this service.
func (s *OS) list(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "/usr/bin/security", "dump-keychain").Output()
	if err != nil {
		return nil, err
	}
	return parseDump(out, s.service), nil
}

// parseDump extracts the "acct" of each "genp" entry whose "svce" is
// service from `security dump-keychain` output.
func parseDump(out []byte, service string) []string {
	var names []string
	var class, svce, acct string
	flush := func() {
		if class == "genp" && svce == service && acct != "" && !slices.Contains(names, acct) {
			names = append(names, acct)
		}
		class, svce, acct = "", "", ""
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "keychain:"):
			flush()
		case strings.HasPrefix(line, "class:"):
			class = strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "class:")), `"`)
		case strings.HasPrefix(line, `"svce"<blob>=`):
			svce = quoted(strings.TrimPrefix(line, `"svce"<blob>=`))
		case strings.HasPrefix(line, `"acct"<blob>=`):
			acct = quoted(strings.TrimPrefix(line, `"acct"<blob>=`))
		}
	}
	flush()
	slices.Sort(names)
	return names
}

func quoted(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return ""
}

func platformDescribe(error) (string, bool) { return "", false }
