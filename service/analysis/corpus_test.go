package analysis_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// The corpus (testdata/corpus*.txt) holds commands with the decision they
// must get and facts about their tree. A case is:
//
//	# comment
//	$ first line of the command
//	> further lines
//	want: deny rm-root      the action, and the deciding rule (or parse_error)
//	names: bash rm          the names of the command nodes, in order ("?": dynamic)
//	has: rm curl            names that must appear somewhere
//	flags: dynamic          flags some node must carry
//	noflags: dynamic        flags no node may carry
//	scripts: 2              how many files were read
//	policy: strict          a named policy (corpusPolicies) instead of the defaults
//	stdin: text             the call's stdin (\n for newlines)
//
// Every case of testdata/corpus_adversarial.txt counts as adversarial.

type corpusCase struct {
	file, cmd    string
	line         int
	action, rule string
	names, has   []string
	flags        []string
	noflags      []string
	scripts      int
	policy       string
	stdin        string
	adversarial  bool
}

func readCorpus(t testing.TB) []corpusCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusCase
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		var cur *corpusCase
		flush := func() {
			if cur != nil {
				if cur.action == "" {
					t.Fatalf("%s:%d: case without want", file, cur.line)
				}
				out = append(out, *cur)
			}
			cur = nil
		}
		line := 0
		for sc.Scan() {
			line++
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "$ "):
				flush()
				cur = &corpusCase{file: file, cmd: l[2:], line: line, scripts: -1, adversarial: strings.Contains(file, "adversarial")}
			case strings.HasPrefix(l, "> ") || l == ">":
				if cur == nil {
					t.Fatalf("%s:%d: continuation outside a case", file, line)
				}
				cur.cmd += "\n" + strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
			case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#"):
			default:
				if cur == nil {
					t.Fatalf("%s:%d: %q outside a case", file, line, l)
				}
				k, v, ok := strings.Cut(l, ":")
				if !ok {
					t.Fatalf("%s:%d: want key: value, got %q", file, line, l)
				}
				v = strings.TrimSpace(v)
				switch k {
				case "want":
					f := strings.Fields(v)
					cur.action = f[0]
					if len(f) > 1 {
						cur.rule = f[1]
					}
				case "names":
					cur.names = strings.Fields(v)
				case "has":
					cur.has = strings.Fields(v)
				case "flags":
					cur.flags = strings.Fields(v)
				case "noflags":
					cur.noflags = strings.Fields(v)
				case "scripts":
					fmt.Sscan(v, &cur.scripts)
				case "policy":
					cur.policy = v
				case "stdin":
					cur.stdin = strings.ReplaceAll(v, `\n`, "\n")
				default:
					t.Fatalf("%s:%d: unknown key %q", file, line, k)
				}
			}
		}
		flush()
		f.Close()
	}
	return out
}

// corpusPolicies are the named policies cases may ask for.
var corpusPolicies = map[string]func() *policy.Policy{
	"default": defaultPolicy,
	// strict allows a few commands by name and denies the rest.
	"strict": func() *policy.Policy {
		p := defaultPolicy()
		p.DefaultAction = "deny"
		p.Rules = policy.Rules{
			{Name: "read-only", Action: "allow", Command: []string{"ls", "cat", "grep", "echo", "pwd", "head", "wc"}},
			{Name: "git-read", Action: "allow", Command: []string{"git"}, Args: []policy.ArgMatch{{Seq: []string{"status"}}}},
		}
		return p
	},
	// rules exercises each matcher.
	"rules": func() *policy.Policy {
		p := defaultPolicy()
		p.Rules = policy.Rules{
			{Name: "no-npm-publish", Action: "deny", Reason: "publish from CI", Command: []string{"npm", "pnpm"}, Args: []policy.ArgMatch{{Seq: []string{"publish"}}}},
			{Name: "ask-docker-priv", Action: "ask", Command: []string{"docker"}, Args: []policy.ArgMatch{{Flag: []string{"--privileged"}}}},
			{Name: "no-tgz", Action: "deny", Command: []string{"tar"}, Args: []policy.ArgMatch{{Glob: []string{"*.tgz"}}}},
			{Name: "no-prod-tag", Action: "deny", Args: []policy.ArgMatch{{Regex: "^--tag=prod"}}},
			{Name: "no-python-toplevel", Action: "deny", Command: []string{"python3*"}, Where: "top_level"},
			{Name: "no-non-shell", Action: "ask", Flags: []string{"non_shell_code"}},
			{Name: "no-usr-local", Action: "deny", Command: []string{"/usr/local/bin/*"}},
			{Name: "rm-force-ask", Action: "ask", Command: []string{"rm"}, Args: []policy.ArgMatch{{Flag: []string{"-f"}}}},
		}
		return p
	},
	// uninspected refuses scripts analysis could not read.
	"uninspected": func() *policy.Policy {
		p := defaultPolicy()
		p.Rules = policy.Rules{
			{Name: "no-outside-scripts", Action: "deny", Flags: []string{"script_outside_roots"}},
			{Name: "no-unreadable-scripts", Action: "deny", Flags: []string{"script_unreadable"}},
			{Name: "no-write-then-run", Action: "ask", Flags: []string{"write_then_run"}},
		}
		return p
	},
	// wrappers trusts the dynamic parts of build wrapper scripts.
	"wrappers": func() *policy.Policy {
		p := defaultPolicy()
		p.Rules = policy.Rules{
			{Name: "gradle-wrapper", Action: "allow", Script: []string{"*/gradlew"}, Flags: []string{"dynamic"}},
			{Name: "ask-scripted-curl", Action: "ask", Script: []string{"*.sh"}, Command: []string{"curl"}},
		}
		return p
	},
	"dynamic-allow": func() *policy.Policy {
		p := defaultPolicy()
		p.DynamicAction = "allow"
		return p
	},
	"no-builtins": func() *policy.Policy {
		p := defaultPolicy()
		p.DisabledBuiltinRules = policy.BuiltinRuleNames()
		return p
	},
	"managed": func() *policy.Policy {
		dir, err := os.MkdirTemp("", "gatehouse-corpus-policy-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		managed, user := filepath.Join(dir, "managed.yaml"), filepath.Join(dir, "config.yaml")
		os.WriteFile(managed, []byte("policy:\n  rules:\n    - {name: no-curl, action: deny, command: curl}\n    - {name: allow-git, action: allow, command: git}\n"), 0o644)
		os.WriteFile(user, []byte("policy:\n  rules:\n    - {name: allow-curl, action: allow, command: curl}\n    - {name: ask-git-push, action: ask, command: git, args: [{seq: [push]}]}\n"), 0o644)
		l, err := policy.Load(policy.LoadOptions{ManagedFile: managed, UserFile: user, Home: "/home/u"})
		if err != nil {
			panic(err)
		}
		return &l.Config.Policy
	},
}

func defaultPolicy() *policy.Policy {
	l, err := policy.Load(policy.LoadOptions{Home: "/home/u"})
	if err != nil {
		panic(err)
	}
	return &l.Config.Policy
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	cases := readCorpus(t)
	fx := analysis.CorpusFixture(t)
	adversarial := 0
	for _, c := range cases {
		if c.adversarial {
			adversarial++
		}
	}
	if len(cases) < 200 || adversarial < 60 {
		t.Errorf("corpus has %d cases, %d adversarial; want at least 200 and 60", len(cases), adversarial)
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s:%d", filepath.Base(c.file), c.line)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pol := defaultPolicy()
			if c.policy != "" {
				mk, ok := corpusPolicies[c.policy]
				if !ok {
					t.Fatalf("unknown policy %q", c.policy)
				}
				pol = mk()
			}
			tree := analysis.Analyze(c.cmd, analysis.CorpusOptions(t, fx, c.stdin))
			d := policy.Decide(tree, pol)
			var b strings.Builder
			policy.WriteText(&b, tree, d)
			fail := func(format string, args ...any) {
				t.Helper()
				t.Errorf("%s\n%s\n--- tree:\n%s", c.cmd, fmt.Sprintf(format, args...), b.String())
			}
			if d.Action != c.action {
				fail("decision %s (%s), want %s", d.Action, d.Rule, c.action)
			}
			if c.rule != "" {
				got := d.Rule
				if d.Code == policy.CodeParseError {
					got = policy.CodeParseError
				}
				if got != c.rule {
					fail("decided by %q, want %q", got, c.rule)
				}
			}
			var names []string
			all := map[string]bool{}
			flags := map[analysis.Flag]bool{}
			for _, n := range tree.Nodes {
				for _, f := range n.Flags {
					flags[f] = true
				}
				if n.Kind != analysis.KindCommand {
					continue
				}
				nm := n.Name
				if nm == "" {
					nm = "?"
				}
				names = append(names, nm)
				all[nm] = true
			}
			if c.names != nil && !slices.Equal(names, c.names) {
				fail("names %q, want %q", names, c.names)
			}
			for _, h := range c.has {
				if !all[h] {
					fail("no node named %q in %q", h, names)
				}
			}
			for _, f := range c.flags {
				if !flags[analysis.Flag(f)] {
					fail("no node flagged %s", f)
				}
			}
			for _, f := range c.noflags {
				if flags[analysis.Flag(f)] {
					fail("a node is flagged %s", f)
				}
			}
			if c.scripts >= 0 && len(tree.Scripts) != c.scripts {
				fail("%d scripts read, want %d", len(tree.Scripts), c.scripts)
			}
		})
	}
}
