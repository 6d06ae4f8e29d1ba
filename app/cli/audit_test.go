package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/notify/notifytest"
)

// testKeyringService keeps the scripts' keychain items apart from the
// user's own "gatehouse" items.
const testKeyringService = "gatehouse-test"

// auditScriptSetup passes the session bus into scripts (the keychain and
// the notification server live on it) and points them at the test
// keychain items.
func auditScriptSetup(e *testscript.Env) {
	for _, k := range []string{"DBUS_SESSION_BUS_ADDRESS", "DISPLAY"} {
		if v := os.Getenv(k); v != "" {
			e.Setenv(k, v)
		}
	}
	e.Setenv(envKeyringService, testKeyringService)
}

var keyringProbe = sync.OnceValue(func() error {
	_, err := keyring.NewOS(testKeyringService).List()
	return err
})

// auditCondition answers [keyring] (the OS keychain answers) and [notify]
// (dunst answers on the session bus). Under REQUIRE_KEYRING=1 or
// REQUIRE_NOTIFY=1 a missing one is an error, not a skip.
func auditCondition(cond string) (ok, known bool, err error) {
	switch cond {
	case "keyring":
		perr := keyringProbe()
		if perr != nil && os.Getenv("REQUIRE_KEYRING") == "1" {
			return false, true, fmt.Errorf("REQUIRE_KEYRING=1 but the keychain does not answer: %v", perr)
		}
		return perr == nil, true, nil
	case "notify":
		ok := notifytest.Available()
		if !ok && notifytest.Required() {
			return false, true, errors.New("REQUIRE_NOTIFY=1 but dunst does not answer on the session bus")
		}
		return ok, true, nil
	}
	return false, false, nil
}

var idPattern = regexp.MustCompile(`"id": "([0-9a-f]{32})"`)

// auditScriptCmds are the scripts' helpers:
//
//	capture-id VAR        set VAR to the first event id in the last stdout
//	notify-mark           remember the newest notification shown so far
//	notifications [TEXT]  print the notifications shown since notify-mark
//	                      (containing TEXT): "shown: N", then one
//	                      "summary | body" line each, newest first
//	sqlite DB SQL         run SQL on a database behind gatehouse's back
func auditScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"sqlite": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: sqlite DB SQL")
			}
			db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
			ts.Check(err)
			defer db.Close()
			_, err = db.Exec(args[1])
			ts.Check(err)
		},
		"capture-id": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: capture-id VAR")
			}
			m := idPattern.FindStringSubmatch(ts.ReadFile("stdout"))
			if m == nil {
				ts.Fatalf("no event id in stdout")
			}
			ts.Setenv(args[0], m[1])
		},
		"notify-mark": func(ts *testscript.TestScript, neg bool, args []string) {
			shown, err := notifytest.History()
			ts.Check(err)
			mark := 0
			for _, s := range shown {
				mark = max(mark, s.ID)
			}
			ts.Setenv("NOTIFY_MARK", strconv.Itoa(mark))
		},
		"notifications": func(ts *testscript.TestScript, neg bool, args []string) {
			// Let a notification sent by the last command arrive.
			time.Sleep(100 * time.Millisecond)
			shown, err := notifytest.History()
			ts.Check(err)
			mark, _ := strconv.Atoi(ts.Getenv("NOTIFY_MARK"))
			var lines []string
			for _, s := range shown {
				line := s.Summary + " | " + strings.ReplaceAll(s.Body, "\n", " / ")
				if s.ID > mark && (len(args) == 0 || strings.Contains(line, args[0])) {
					lines = append(lines, line)
				}
			}
			fmt.Fprintf(ts.Stdout(), "shown: %d\n", len(lines))
			for _, l := range lines {
				fmt.Fprintln(ts.Stdout(), l)
			}
		},
	}
}

func TestAuditSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"90m", now.Add(-90 * time.Minute), ""},
		{"7d", now.Add(-7 * 24 * time.Hour), ""},
		{"2025-03-01", time.Date(2025, 3, 1, 0, 0, 0, 0, time.Local), ""},
		{"2025-03-01T10:00:00Z", time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), ""},
		{"-5m", time.Time{}, "not a positive duration"},
		{"0d", time.Time{}, "neither a duration"},
		{"yesterday", time.Time{}, "neither a duration"},
	} {
		got, err := audit.ParseSince(tc.in, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestAuditShorten(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"echo hi":                        "echo hi",
		"  a\n  b  ":                     "a ⏎ b",
		"":                               "-",
		strings.Repeat("é", 70):          strings.Repeat("é", 59) + "…",
		"for f in *; do\n echo $f\ndone": "for f in *; do ⏎ echo $f ⏎ done",
	} {
		if got := audit.Shorten(in, 60); got != want {
			t.Errorf("audit.Shorten(%q) = %q, want %q", in, got, want)
		}
	}
}

// Bad arguments are one line naming the flag, exit status 2.
func TestAuditUsage(t *testing.T) {
	home := filepath.Join(sandboxtest.Dir(t), "home")
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"audit"}, "audit: missing subcommand"},
		{[]string{"audit", "frob"}, `audit: unknown subcommand "frob"`},
		{[]string{"audit", "list", "--status", "bogus"}, `audit list: --status: "bogus" is not one of completed, timed_out, killed, failed_to_start, never_ran, denied`},
		{[]string{"audit", "list", "--sandbox-mode", "chroot"}, `audit list: --sandbox-mode: "chroot" is not one of bubblewrap`},
		{[]string{"audit", "list", "--since", "yesterday"}, `audit list: --since: "yesterday" is neither a duration`},
		{[]string{"audit", "list", "--limit", "-1"}, "audit list: --limit: -1 is not allowed"},
		{[]string{"audit", "list", "--bogus"}, "audit list: flag provided but not defined: -bogus"},
		{[]string{"audit", "list", "extra"}, `audit list: unexpected argument "extra"`},
		{[]string{"audit", "export", "--status", "x"}, `audit export: --status: "x"`},
		{[]string{"audit", "show"}, "audit show: want one event ID"},
		{[]string{"audit", "show", "a", "b"}, "audit show: want one event ID"},
		{[]string{"audit", "verify", "--json"}, "audit verify: flag provided but not defined: -json"},
	} {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: getenv}
		code := run(context.Background(), env, tc.args)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != ExitUsage || len(lines) != 1 || !strings.Contains(lines[0], tc.msg) {
			t.Errorf("gatehouse %q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errb.String(), tc.msg)
		}
	}
}
