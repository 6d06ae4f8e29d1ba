package analysis

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestANSIC(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`\x72\x6d`:       "rm",
		`\162\155`:       "rm",
		`\u0072m`:        "rm",
		`a\tb\n`:         "a\tb\n",
		`\'q\'`:          "'q'",
		`\cA`:            "\x01",
		`\xZ`:            `\xZ`,
		`\e[0m`:          "\x1b[0m",
		`no escapes`:     "no escapes",
		`\U0001F600`:     "😀",
		`trailing\`:      `trailing\`,
		`\q unknown`:     `\q unknown`,
		`\0101 octal 3`:  "\b1 octal 3", // at most three digits
		`mixed \x2f\x2A`: "mixed /*",
	} {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShebang(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"#!/bin/bash\necho":                    "bash",
		"#!/bin/sh -e\n":                       "sh",
		"#!/usr/bin/env bash\n":                "bash",
		"#!/usr/bin/env -S bash -euo pipefail": "bash",
		"#!/usr/bin/env -i PATH=/x python3\n":  "python",
		"#!/usr/bin/python3.12\n":              "python",
		"#!/usr/bin/node\n":                    "node",
		"#!/bin/zsh\n":                         "zsh",
		"#!/usr/bin/make -f\n":                 "make",
		"#!\n":                                 "",
		"echo plain\n":                         "",
		"\x7fELF\x02\x01":                      "",
	} {
		if got, _ := shebang([]byte(in)); got != want {
			t.Errorf("shebang(%q) = %q, want %q", in, got, want)
		}
	}
	if _, text := shebang([]byte("\x7fELF\x02")); text {
		t.Errorf("an ELF file is text")
	}
	if _, text := shebang([]byte("a\x00b")); text {
		t.Errorf("a file with NUL is text")
	}
}

func TestTreeFacts(t *testing.T) {
	t.Parallel()
	tr := Analyze("echo $(date) | sudo -u x tee out >/dev/null &\nf() { ls; }", opts("/w"))
	if tr.ParseError != nil {
		t.Fatal(tr.ParseError)
	}
	var b strings.Builder
	for _, n := range tr.Nodes {
		fmt.Fprintf(&b, "#%d p=%d via=%q %s %q ctx=%v top=%v %s\n", n.ID, n.Parent, n.Via, n.Pos(), n.Name, n.Context, n.TopLevel(), n.Path)
	}
	want := `#0 p=-1 via="" 1:1 "echo" ctx=[background pipeline] top=true 
#1 p=0 via="" 1:8 "date" ctx=[background pipeline cmd_subst] top=false /usr/bin/date
#2 p=-1 via="" 1:16 "sudo" ctx=[background pipeline] top=true /usr/bin/sudo
#3 p=2 via="sudo" 1:16 "tee" ctx=[background pipeline] top=false /usr/bin/tee
#4 p=-1 via="" 2:7 "ls" ctx=[function f] top=false /usr/bin/ls
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%swant:\n%s", got, want)
	}
	if r := tr.Nodes[2].Redirs; len(r) != 1 || r[0].Op != ">" || r[0].Target != "/dev/null" {
		t.Errorf("redirs %+v", r)
	}
	if got := strings.Join(tr.ResolvedCommands(), " "); got != "echo /usr/bin/date /usr/bin/sudo /usr/bin/tee /usr/bin/ls" {
		t.Errorf("resolved commands %q", got)
	}
}

// A script that changes between two reads in one analysis is read once.
func TestScriptReadOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	os.WriteFile(filepath.Join(dir, "a.sh"), []byte("echo a\n"), 0o755)
	o := opts(dir)
	o.ScriptRoots = []string{dir}
	tr := Analyze("bash a.sh; ./a.sh; . a.sh", o)
	if len(tr.Scripts) != 1 || !tr.Scripts[0].Exec || tr.Scripts[0].SHA256 != SHA256([]byte("echo a\n")) || string(tr.Scripts[0].Data()) != "echo a\n" {
		t.Errorf("scripts %+v", tr.Scripts)
	}
	// A FIFO is not read (and does not block).
	fifo := filepath.Join(dir, "fifo.sh")
	if err := mkfifo(fifo); err == nil {
		tr := Analyze("bash fifo.sh", o)
		if !tr.Nodes[0].Has(FlagScriptUnreadable) {
			t.Errorf("fifo: %+v", tr.Nodes[0])
		}
	}
}
