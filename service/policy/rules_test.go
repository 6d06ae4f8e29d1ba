package policy

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestRulesDecode(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `policy:
  rules:
    - name: no-publish
      action: deny
      reason: publish from CI
      command: [npm, pnpm]
      args:
        - seq: [publish]
        - flag: --force
        - glob: ["*.tgz", x]
        - regex: "^--tag="
      where: top_level
      flags: [dynamic_args]
    - {name: ask-all, action: ask}
  disabled_builtin_rules: [rm-root]
  dynamic_action: deny
`)
	if errText != "" {
		t.Fatal(errText)
	}
	want := Rules{
		{Name: "no-publish", Action: "deny", Reason: "publish from CI", Command: []string{"npm", "pnpm"},
			Args:  []ArgMatch{{Seq: []string{"publish"}}, {Flag: []string{"--force"}}, {Glob: []string{"*.tgz", "x"}}, {Regex: "^--tag="}},
			Where: "top_level", Flags: []string{"dynamic_args"}},
		{Name: "ask-all", Action: "ask"},
	}
	if got := l.Config.Policy.Rules; !reflect.DeepEqual(got, want) {
		t.Errorf("rules:\n got %+v\nwant %+v", got, want)
	}
	p := &l.Config.Policy
	if p.BuiltinEnabled("rm-root") || !p.BuiltinEnabled("curl-pipe-shell") || p.DynamicAction != "deny" {
		t.Errorf("disabled %v, dynamic_action %q", p.DisabledBuiltinRules, p.DynamicAction)
	}
	if got := l.Sources["policy.rules"].String(); !strings.HasSuffix(got, "config.yaml:2") {
		t.Errorf("source %q", got)
	}
}

func TestRulesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, rules, want string }{
		{"not a list", "rules: deny-all\n", `config.yaml:2: policy.rules: want a list of rules, each a mapping with name, action and matchers; got "deny-all"`},
		{"not a mapping", "rules: [deny]\n", `config.yaml:2: policy.rules: [0]: want a mapping with name, action and matchers, got "deny"`},
		{"missing name", "rules:\n  - action: deny\n", "config.yaml:3: policy.rules: [0].name: missing; every rule needs a name"},
		{"missing action", "rules:\n  - name: x\n", "config.yaml:3: policy.rules: [0].action: missing; want allow, ask or deny"},
		{"bad action", "rules:\n  - name: x\n    action: block\n", `config.yaml:4: policy.rules: [0].action: "block" is not one of allow, ask, deny`},
		{"unknown key", "rules:\n  - name: x\n    action: deny\n    cmd: rm\n", "config.yaml:5: policy.rules: [0].cmd: unknown key; a rule has name, action, reason, command, args, where, script, flags"},
		{"repeated key", "rules:\n  - {name: x, action: deny, action: allow}\n", "policy.rules: [0].action: repeated key"},
		{"duplicate name", "rules:\n  - {name: x, action: deny}\n  - {name: x, action: allow}\n", `config.yaml:4: policy.rules: [1].name: "x" is already the name of rule [0]`},
		{"bad name", "rules:\n  - {name: 'has space', action: deny}\n", `[0].name: "has space" is not a rule name`},
		{"bad where", "rules:\n  - {name: x, action: deny, where: nested}\n", `[0].where: "nested" is not one of any, top_level`},
		{"bad flag", "rules:\n  - {name: x, action: deny, flags: [dynamic, wat]}\n", `[0].flags[1]: "wat" is not an analysis flag`},
		{"bad regex", "rules:\n  - {name: x, action: deny, args: [{regex: '('}]}\n", `[0].args[0].regex: "(" does not compile`},
		{"bad glob", "rules:\n  - {name: x, action: deny, command: '[z-a]'}\n", `[0].command[0]: "[z-a]" is not a valid pattern`},
		{"two matchers", "rules:\n  - {name: x, action: deny, args: [{flag: -f, seq: [a]}]}\n", "[0].args[0]: want a mapping with one of exact, flag, seq, glob or regex"},
		{"unknown matcher", "rules:\n  - {name: x, action: deny, args: [{word: a}]}\n", "[0].args[0].word: unknown matcher"},
		{"not a flag", "rules:\n  - {name: x, action: deny, args: [{flag: force}]}\n", `[0].args[0].flag: "force" is not a flag`},
		{"empty seq", "rules:\n  - {name: x, action: deny, args: [{seq: []}]}\n", "[0].args[0].seq: is empty"},
		{"command list", "rules:\n  - {name: x, action: deny, command: [{a: b}]}\n", "[0].command: want a list of strings, got a mapping in it"},
		{"unknown builtin", "disabled_builtin_rules: [rm-root, rm-all]\n", `policy.disabled_builtin_rules[1]: "rm-all" is not a built-in rule`},
		{"builtin twice", "disabled_builtin_rules: [rm-root, rm-root]\n", `policy.disabled_builtin_rules[1]: "rm-root" is listed twice`},
		{"dynamic action", "dynamic_action: maybe\n", `policy.dynamic_action: "maybe" is not one of allow, ask, deny`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := "policy:\n" + indent(tc.rules)
			_, got := loadFiles(t, "", body)
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// Managed rules come first and stay managed; the user's follow. A user
// file may repeat a managed rule, not reuse its name for another; under a
// managed default_action of ask or deny it may not allow.
func TestRulesManaged(t *testing.T) {
	t.Parallel()
	managed := "policy:\n  rules:\n    - {name: no-curl, action: deny, command: curl}\n"
	l, errText := loadFiles(t, managed, "policy:\n  rules:\n    - {name: no-curl, action: deny, command: curl}\n    - {name: ok-git, action: allow, command: git}\n")
	if errText != "" {
		t.Fatal(errText)
	}
	rs := l.Config.Policy.Rules
	if len(rs) != 2 || rs[0].Name != "no-curl" || !rs[0].Managed() || rs[1].Name != "ok-git" || rs[1].Managed() {
		t.Fatalf("rules %+v", rs)
	}
	for _, tc := range []struct{ name, managed, user, want string }{
		{"name reused", managed, "policy:\n  rules:\n    - {name: no-curl, action: allow, command: curl}\n",
			`config.yaml:2: policy.rules: [0].name: "no-curl" is the name of a managed rule (managed.yaml:2); use another name`},
		{"allow under deny", "policy:\n  default_action: deny\n", "policy:\n  rules:\n    - {name: ok, action: allow, command: ls}\n",
			`config.yaml:2: policy.rules: [0].action: allow widens the managed default_action "deny" (managed.yaml:2); user rules may only ask or deny`},
		{"deny under deny", "policy:\n  default_action: deny\n", "policy:\n  rules:\n    - {name: no, action: deny, command: ls}\n", ""},
		{"disable kept builtin", "policy:\n  disabled_builtin_rules: []\n", "policy:\n  disabled_builtin_rules: [rm-root]\n",
			`config.yaml:2: policy.disabled_builtin_rules[0]: "rm-root" is not in the managed list [] (managed.yaml:2); the managed file keeps every built-in rule on`},
		{"disable allowed builtin", "policy:\n  disabled_builtin_rules: [fork-bomb, rm-root]\n", "policy:\n  disabled_builtin_rules: [rm-root]\n", ""},
		{"dynamic widened", "policy:\n  dynamic_action: deny\n", "policy:\n  dynamic_action: ask\n", `policy.dynamic_action: "ask" widens the managed value "deny"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got := loadFiles(t, tc.managed, tc.user)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The effective rules written back as YAML load to the same rules, and
// Show prints them as YAML reads them back.
func TestRulesRoundTrip(t *testing.T) {
	t.Parallel()
	l, errText := loadFiles(t, "", `policy:
  rules:
    - {name: "a:b", action: deny, reason: "it's: bad", command: ["*sh"], args: [{flag: [-f, --force]}, {regex: "^x$"}], where: any, script: ["*/gradlew"], flags: [dynamic]}
    - {name: c, action: allow}
`)
	if errText != "" {
		t.Fatal(errText)
	}
	out, err := yaml.Marshal(&l.Config)
	if err != nil {
		t.Fatal(err)
	}
	again, errText := loadFiles(t, "", string(out))
	if errText != "" {
		t.Fatalf("%s\n%s", errText, out)
	}
	if !reflect.DeepEqual(again.Config.Policy.Rules, l.Config.Policy.Rules) {
		t.Errorf("round trip:\n got %+v\nwant %+v", again.Config.Policy.Rules, l.Config.Policy.Rules)
	}
	shown := l.Config.Policy.Rules.String()
	var back struct{ V Rules }
	if err := yaml.Unmarshal([]byte("v: "+shown), &back); err != nil {
		t.Fatalf("Show value %s does not read back: %v", shown, err)
	}
	if !reflect.DeepEqual(back.V, l.Config.Policy.Rules) {
		t.Errorf("Show value %s reads back as %+v", shown, back.V)
	}
}

func TestCompileGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"git", "git", true},
		{"git", "gitk", false},
		{"python3*", "python3.12", true},
		{"*.tgz", "a/b.tgz", true}, // * crosses /
		{"/usr/local/bin/*", "/usr/local/bin/x", true},
		{"/usr/local/bin/*", "/usr/bin/x", false},
		{"a.b", "axb", false}, // . is literal
		{"[ab]c", "bc", true},
	} {
		re, err := CompileGlob(tc.pat)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if got := re.MatchString(tc.s); got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

func TestScriptInspectionRootsEffective(t *testing.T) {
	t.Parallel()
	c := &Config{Exec: Exec{DefaultCWD: "/w"}}
	if got := c.ScriptInspectionRootsEffective(); !reflect.DeepEqual(got, []string{"/w"}) {
		t.Errorf("empty: %q", got)
	}
	c.Policy.WorkspaceRoots = []string{"/a", "/b"}
	if got := c.ScriptInspectionRootsEffective(); !reflect.DeepEqual(got, []string{"/a", "/b"}) {
		t.Errorf("workspace roots: %q", got)
	}
	c.Policy.ScriptInspectionRoots = []string{"/s"}
	if got := c.ScriptInspectionRootsEffective(); !reflect.DeepEqual(got, []string{"/s"}) {
		t.Errorf("set: %q", got)
	}
}
