package analysis

// This file reads the files task runners take their code from, like
// scripts: a Makefile's recipes (make) and package.json scripts (npm, yarn,
// pnpm) are shell code the runner hands to sh. The file is read under the
// inspection roots only, hashed and pinned; the recipes or scripts the
// command would run are parsed into the tree under the runner. A runner
// file the same command writes is write-then-run: its bytes are judged
// when they are known (and cannot be pinned: the file does not exist
// before the command runs), else the runner is dynamic. Other runners
// (just, task, tox, nox, poetry/pdm/hatch/uv run, cargo) are flagged
// write_then_run and dynamic when the command writes their file first;
// their existing files are not read.

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// runnerFiles are the files other task runners take code from.
var runnerFiles = map[string][]string{
	"just":    {"justfile", "Justfile", ".justfile"},
	"task":    {"Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml"},
	"go-task": {"Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml"},
	"tox":     {"tox.ini", "pyproject.toml", "setup.cfg"},
	"nox":     {"noxfile.py"},
	"poetry":  {"pyproject.toml"},
	"pdm":     {"pyproject.toml"},
	"hatch":   {"pyproject.toml", "hatch.toml"},
	"uv":      {"pyproject.toml"},
	"rye":     {"pyproject.toml"},
	"cargo":   {"Cargo.toml", "build.rs", ".cargo/config.toml"},
}

// maxRunnerTargets bounds the make targets (and prerequisites) followed.
const maxRunnerTargets = 64

// runnerDir returns the one directory a runner runs in, with dir (make -C,
// npm --prefix) applied; it flags n when that is not known.
func (a *analyzer) runnerDir(n *Node, dirs []string, sc *scope) (string, bool) {
	cwd, ok := sc.st.single()
	if !ok {
		a.flag(n.ID, FlagScriptUnreadable, "%s: the working directory is not known at this point, so its file cannot be located", n.Name)
		return "", false
	}
	for _, d := range dirs {
		cwd = cleanJoin(cwd, d)
	}
	return cwd, true
}

// runnerSource returns the text of the runner file p that n reads: the
// bytes the command writes there first, when known, or the file itself
// (pinned). exists is false when p neither exists nor is written.
func (a *analyzer) runnerSource(n *Node, p string) (text string, f *fileResult, exists, ok bool) {
	var last *writeRec
	for i := range a.writes {
		w := &a.writes[i]
		if w.node == n.ID || !slices.Contains(w.paths, p) {
			continue
		}
		last = w
		n.writtenBy = append(n.writtenBy, w.node)
		a.flag(n.ID, FlagWriteThenRun, "%s runs code from %s, which this command writes first (%s)", n.Name, p, w.what)
	}
	if last != nil {
		switch {
		case last.content != nil && !last.content.Dynamic:
			a.note(n.ID, p+" is judged as the command writes it; it does not exist before the command runs, so it is not pinned")
			return last.content.Value, nil, true, true
		case len(last.from) == 1:
			src := a.readFile(last.from[0])
			if src.status == "ok" {
				i := a.addScript(src, n.Name, false)
				n.Scripts = append(n.Scripts, i)
				return string(src.data), src, true, true
			}
		}
		a.flag(n.ID, FlagDynamic, "%s runs code from %s, which this command writes with contents only known at run time", n.Name, p)
		n.runsCode = true
		return "", nil, true, false
	}
	f = a.readFile(p)
	switch f.status {
	case "ok":
		return string(f.data), f, true, true
	case "missing":
		return "", f, false, false
	case "outside":
		a.flag(n.ID, FlagScriptOutsideRoots, "%s is outside the script inspection roots, so the code %s runs from it is not read", p, n.Name)
	case "denied":
		a.flag(n.ID, FlagScriptOutsideRoots, "%s is in the deny-read set, so the code %s runs from it is not read", p, n.Name)
	default:
		a.flag(n.ID, FlagScriptUnreadable, "%s cannot be read (%s), so the code %s runs from it is not known", p, f.status, n.Name)
	}
	return "", f, true, false
}

// pinRunner records the runner file f as read and judged, with the shell
// code taken from it (for the credential check).
func (a *analyzer) pinRunner(n *Node, f *fileResult, lang string, code []string) {
	if f == nil || f.status != "ok" {
		return
	}
	i := a.addScript(f, lang, false)
	if !slices.Contains(n.Scripts, i) {
		n.Scripts = append(n.Scripts, i)
	}
	a.tree.Scripts[i].code = append(a.tree.Scripts[i].code, code...)
	a.flag(n.ID, FlagScriptInspected, "")
}

// runnerCode walks code a runner hands to a shell in dir, under n.
func (a *analyzer) runnerCode(n *Node, code Arg, what, dir string, lang syntax.LangVariant, sc *scope) {
	c := a.payloadScope(sc, n)
	c.st.cwds, c.st.known = []string{dir}, true
	c.args = params{known: true, zero: "sh"}
	n.runsCode = true
	a.code(n, code, what, lang, c)
}

// otherRunner flags a runner whose file the command writes before running
// it; the code in such files is not read.
func (a *analyzer) otherRunner(n *Node, sc *scope) {
	dir, ok := sc.st.single()
	if !ok {
		return
	}
	for _, name := range runnerFiles[n.Name] {
		p := path.Join(dir, name)
		for _, w := range a.writes {
			if w.node != n.ID && slices.Contains(w.paths, p) {
				n.writtenBy = append(n.writtenBy, w.node)
				a.flag(n.ID, FlagWriteThenRun, "%s runs code from %s, which this command writes first (%s)", n.Name, p, w.what)
				a.flag(n.ID, FlagDynamic, "%s takes code from %s, which this command writes; analysis does not read %s files", n.Name, p, n.Name)
				n.runsCode = true
			}
		}
	}
}

// --- npm, yarn, pnpm ---------------------------------------------------

// npmLifecycle are the scripts of the package itself that an install runs.
var npmLifecycle = []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"}

// yarnBuiltins and pnpmBuiltins are subcommands that are not scripts.
var (
	yarnBuiltins = map[string]bool{"add": true, "audit": true, "autoclean": true, "bin": true, "cache": true, "check": true,
		"config": true, "create": true, "dlx": true, "exec": true, "generate-lock-entry": true, "global": true, "help": true,
		"import": true, "info": true, "init": true, "licenses": true, "link": true, "list": true, "login": true, "logout": true,
		"node": true, "outdated": true, "owner": true, "pack": true, "policies": true, "publish": true, "remove": true,
		"tag": true, "team": true, "unlink": true, "unplug": true, "upgrade": true, "upgrade-interactive": true, "up": true,
		"version": true, "versions": true, "why": true, "workspace": true, "workspaces": true, "set": true, "plugin": true,
		"explain": true, "constraints": true, "npm": true, "patch": true, "patch-commit": true, "rebuild": true, "dedupe": true,
		"stage": true, "search": true, "--version": true, "-v": true}
	pnpmBuiltins = map[string]bool{"add": true, "audit": true, "bin": true, "config": true, "create": true, "deploy": true,
		"dlx": true, "env": true, "exec": true, "fetch": true, "import": true, "init": true, "licenses": true, "link": true,
		"list": true, "ls": true, "outdated": true, "pack": true, "patch": true, "patch-commit": true, "prune": true,
		"publish": true, "rebuild": true, "remove": true, "rm": true, "root": true, "server": true, "setup": true,
		"store": true, "unlink": true, "update": true, "up": true, "why": true, "help": true, "-v": true, "--version": true}
)

// npm follows npm run X, npm test, npm start, npm install and their yarn
// and pnpm spellings into the package's scripts.
func (a *analyzer) npm(n *Node, sc *scope) {
	args := n.Argv[1:]
	var prefix []string
	var rest []Arg
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			a.flag(n.ID, FlagDynamic, "%s with an argument only known at run time: %s", n.Name, short(v))
			return
		}
		switch {
		case v == "--ignore-scripts":
			return
		case v == "--prefix" || v == "-C" || v == "--dir" || v == "--cwd":
			if i+1 < len(args) {
				i++
				prefix = append(prefix, args[i].Value)
			}
		case strings.HasPrefix(v, "--prefix=") || strings.HasPrefix(v, "--dir=") || strings.HasPrefix(v, "--cwd="):
			_, d, _ := strings.Cut(v, "=")
			prefix = append(prefix, d)
		case v == "-w" || v == "--workspace" || v == "--filter" || v == "-F" || strings.HasPrefix(v, "--workspace=") || strings.HasPrefix(v, "--filter=") ||
			v == "--workspaces" || v == "-ws" || v == "-r" || v == "--recursive":
			a.flag(n.ID, FlagDynamic, "%s %s runs the scripts of workspace packages, which analysis does not locate", n.Name, v)
			return
		case strings.HasPrefix(v, "-") && len(rest) == 0:
		default:
			rest = append(rest, x)
		}
	}
	sub := ""
	if len(rest) > 0 {
		sub = rest[0].Value
	}
	var run []string
	var extra []Arg
	script := func() {
		// npm run [options] NAME [args]
		for i := 1; i < len(rest); i++ {
			if name := rest[i].Value; !strings.HasPrefix(name, "-") {
				run = []string{"pre" + name, name, "post" + name}
				extra = rest[i+1:]
				return
			}
		}
	}
	install := false
	switch n.Name {
	case "npm":
		switch sub {
		case "run", "run-script", "rum", "urn":
			script()
		case "test", "t", "tst", "start", "stop", "restart":
			name := map[string]string{"t": "test", "tst": "test"}[sub]
			if name == "" {
				name = sub
			}
			run, extra = []string{"pre" + name, name, "post" + name}, rest[1:]
		case "install", "i", "in", "ins", "inst", "add", "ci", "clean-install", "ic", "install-clean", "isntall", "install-test", "it", "install-ci-test", "cit":
			install = true
		case "publish", "pack":
			run = []string{"prepublishOnly", "prepack", "prepare", "postpack"}
			if sub == "publish" {
				run = append(run, "publish", "postpublish")
			}
		default:
			return
		}
	case "yarn", "pnpm":
		builtins := yarnBuiltins
		if n.Name == "pnpm" {
			builtins = pnpmBuiltins
		}
		switch {
		case sub == "" && n.Name == "yarn", sub == "install", sub == "i" && n.Name == "pnpm", sub == "add":
			install = true
		case sub == "run" || sub == "run-script":
			script()
		case builtins[sub] || sub == "":
			return
		default:
			// yarn X, pnpm X: the script X.
			run, extra = []string{"pre" + sub, sub, "post" + sub}, rest[1:]
		}
	}
	if install {
		run = npmLifecycle
		a.note(n.ID, n.Name+" runs the install scripts of the packages it installs; those are not analysed")
	}
	if len(run) == 0 {
		return
	}
	dir, ok := a.runnerDir(n, prefix, sc)
	if !ok {
		return
	}
	// The package is the nearest directory holding a package.json.
	for d := dir; ; d = path.Dir(d) {
		p := path.Join(d, "package.json")
		text, f, exists, ok := a.runnerSource(n, p)
		if !exists {
			if d == "/" || !a.underRoots(path.Dir(d)) {
				return
			}
			continue
		}
		if !ok {
			return
		}
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if err := json.Unmarshal([]byte(text), &pkg); err != nil {
			a.note(n.ID, p+" is not valid JSON; "+n.Name+" runs nothing from it")
			a.pinRunner(n, f, "npm", nil)
			return
		}
		var code []string
		for i, s := range run {
			body, ok := pkg.Scripts[s]
			if !ok || strings.TrimSpace(body) == "" {
				continue
			}
			// The arguments after the script's name are appended to it.
			if i == 1 && len(extra) > 0 {
				if extra[0].Value == "--" {
					extra = extra[1:]
				}
				for _, x := range extra {
					body += " " + shellQuote(x)
				}
			}
			code = append(code, body)
			a.runnerCode(n, Arg{Value: body}, "package.json scripts."+s, d, syntax.LangPOSIX, sc)
		}
		a.pinRunner(n, f, "npm", code)
		return
	}
}
