package main

import (
	"os/exec"
	"strings"
	"testing"
)

// gatehouse-hook starts on every tool call Claude Code makes: it links the
// hook's input and output, the wire types, the socket's client and the
// relay, and nothing of the configuration, the audit store, the keychain
// or the OS service manager. A package outside this list (the standard
// library aside) is a start-up cost on every call; add it only with the
// measurement that says it is cheap.
var allowed = map[string]bool{
	"github.com/gatehouse-dev/gatehouse/app/gatehouse-hook": true,
	"github.com/gatehouse-dev/gatehouse/hook/claude":        true,
	"github.com/gatehouse-dev/gatehouse/hook/decide":        true,
	"github.com/gatehouse-dev/gatehouse/hook/relay":         true,
	"github.com/gatehouse-dev/gatehouse/sandbox":            true,
	"github.com/gatehouse-dev/gatehouse/service/api":        true,
	"github.com/gatehouse-dev/gatehouse/service/dirs":       true,
	"github.com/gatehouse-dev/gatehouse/service/localapi":   true,
	"github.com/gatehouse-dev/gatehouse/service/socket":     true,
	"golang.org/x/sys/unix":                                 true,
	"golang.org/x/sys/windows":                              true,
}

func TestDependencyAllowlist(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (GOOS=%s): %v", goos, err)
		}
		for _, p := range strings.Fields(string(out)) {
			// The standard library's packages have no dot in their first
			// element (vendor/golang.org/… is the standard library's own).
			first, _, _ := strings.Cut(p, "/")
			if !strings.Contains(first, ".") || allowed[p] {
				continue
			}
			t.Errorf("GOOS=%s: gatehouse-hook depends on %s, which is not on its allowlist", goos, p)
		}
	}
}
