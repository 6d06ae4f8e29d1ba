package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

var (
	fixtureOnce sync.Once
	fixtureDir  fixture
)

// fixture is the workspace the corpus runs in.
type fixture struct {
	ws, outside, home string
}

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
		os.Symlink("sub", filepath.Join(fx.ws, "tools"))
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

// opts is a plain environment for the unit tests.
func opts(dir string) Options {
	return Options{
		Dialect: "bash", Dir: dir,
		Env:      map[string]string{"HOME": "/home/u", "PATH": "/usr/bin:/bin"},
		LookPath: func(dir, name string) bool { return dir == "/usr/bin" && corpusPath[name] },
	}
}

// What the tests of package analysis_test (which judge trees with
// service/policy, and so cannot be in this package) use from here.
type Fixture = fixture

var (
	CorpusFixture = corpusFixture
	CorpusOptions = corpusOptions
	Opts          = opts
	ShellQuote    = shellQuote
)

// SetTestOnlyParse sets the hook called with every text parsed, for
// tests of package analysis_test; nil removes it.
func SetTestOnlyParse(f func(text string)) { testOnlyParse = f }

// NewTestScript returns a script read with the bytes data, for tests of
// package analysis_test.
func NewTestScript(path, lang string, data []byte) *Script {
	return &Script{Path: path, Lang: lang, data: data}
}
