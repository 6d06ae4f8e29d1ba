package analysis

// This file handles git: the subcommands that run code or push, and the
// branch and remote a push goes to.

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// git: -c settings that are commands, and aliases defined with -c.
func (a *analyzer) git(n *Node, sc *scope) {
	args := n.Argv[1:]
	configs := map[string]Arg{}
	var gitDirs []Arg
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, "$") {
				a.flag(n.ID, FlagDynamic, "git with an option only known at run time: %s", short(v))
				return
			}
			break
		}
		switch {
		case v == "-c":
			i++
			if i < len(args) {
				if args[i].Dynamic {
					a.flag(n.ID, FlagDynamic, "git -c with a setting only known at run time: %s", short(args[i].Value))
					continue
				}
				k, val, _ := strings.Cut(args[i].Value, "=")
				configs[strings.ToLower(k)] = Arg{Value: val}
			}
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--exec-path" || v == "--super-prefix" || v == "--config-env" || v == "--list-cmds" || v == "--attr-source":
			if v == "-C" && i+1 < len(args) {
				gitDirs = append(gitDirs, args[i+1])
			}
			if v == "--config-env" && i+1 < len(args) {
				a.flag(n.ID, FlagDynamic, "git --config-env takes a setting from an environment variable")
			}
			i++
		case strings.HasPrefix(v, "--config-env="):
			a.flag(n.ID, FlagDynamic, "git --config-env takes a setting from an environment variable")
		case strings.HasPrefix(v, "--exec-path="):
			a.flag(n.ID, FlagDynamic, "git --exec-path runs git subcommands from another directory")
		case strings.HasPrefix(v, "-"):
		default:
			goto sub
		}
	}
sub:
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := configs[k]
		if !strings.HasPrefix(k, "alias.") {
			a.gitSetting(n, k, v, "git -c "+k, sc)
		}
	}
	if i >= len(args) {
		return
	}
	sub := args[i].Value
	if sub == "push" {
		n.gitPush = a.parsePush(args[i+1:], gitDirs, sc)
	}
	v, ok := configs["alias."+strings.ToLower(sub)]
	if !ok {
		v, ok = a.gitEnvAlias(strings.ToLower(sub), sc)
		if ok && v.Dynamic {
			a.flag(n.ID, FlagDynamic, "git alias %s comes from the environment and is only known at run time", sub)
			return
		}
	}
	if ok {
		if strings.HasPrefix(v.Value, "!") {
			c := a.payloadScope(sc, n)
			c.args = params{known: true, zero: "sh", list: args[i+1:]}
			text := strings.TrimPrefix(v.Value, "!")
			// git runs "alias args..." through sh -c with the arguments
			// appended as "$@".
			if len(args[i+1:]) > 0 {
				text += ` "$@"`
			}
			a.code(n, Arg{Value: text}, "git alias "+sub, syntax.LangPOSIX, c)
			return
		}
		words, ok := a.splitWords(v.Value, sc)
		if !ok {
			a.flag(n.ID, FlagDynamic, "git alias %s analysis cannot split: %s", sub, short(v.Value))
			return
		}
		argv := append([]Arg{{Value: "git"}}, words...)
		argv = append(argv, args[i+1:]...)
		a.payload(n, "git alias "+sub, argv, sc)
	}
}

// urlBase is the file name curl -O and wget give a download.
func urlBase(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	b := path.Base(u)
	if b == "." || b == "/" || strings.Contains(b, ":") {
		return "index.html"
	}
	return b
}

// parsePush reads the options and refspecs of git push, and the current
// branch from the repository's HEAD.
func (a *analyzer) parsePush(args []Arg, dirs []Arg, sc *scope) *gitPush {
	g := &gitPush{}
	var ops []Arg
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			ops = append(ops, x)
			continue
		}
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "--force" || strings.HasPrefix(v, "--force-with-lease") || v == "--force-if-includes":
			g.force = true
		case v == "--mirror":
			g.force, g.all = true, true
		case v == "--all" || v == "--branches":
			g.all = true
		case v == "--delete":
			g.delete = true
		case v == "--dry-run":
			return nil
		case v == "-o" || v == "--push-option" || v == "--repo" || v == "--receive-pack" || v == "--exec":
			i++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if strings.Contains(v, "n") {
				return nil
			}
			g.force = g.force || strings.Contains(v, "f")
			g.delete = g.delete || strings.Contains(v, "d")
			if strings.HasSuffix(v, "o") {
				i++
			}
		default:
			ops = append(ops, x)
		}
	}
	if len(ops) > 1 {
		g.refs = ops[1:]
		for _, r := range g.refs {
			if strings.HasPrefix(r.Value, "+") || strings.HasPrefix(r.Value, ":") {
				g.plusRef = true
			}
		}
	}
	g.branch, g.branchKnown = a.currentBranch(dirs, sc)
	return g
}

// currentBranch reads the branch HEAD names in the repository the command
// runs in (inside the inspection roots only).
func (a *analyzer) currentBranch(dirs []Arg, sc *scope) (string, bool) {
	dir, ok := sc.st.single()
	if !ok {
		return "", false
	}
	for _, d := range dirs {
		if d.Dynamic {
			return "", false
		}
		dir = cleanJoin(dir, d.Value)
	}
	for d := dir; ; d = path.Dir(d) {
		f := a.readFile(path.Join(d, ".git", "HEAD"))
		switch f.status {
		case "ok":
			ref, ok := strings.CutPrefix(strings.TrimSpace(string(f.data)), "ref: refs/heads/")
			return ref, ok
		case "missing":
		default:
			return "", false
		}
		if d == "/" || !a.underRoots(d) {
			return "", false
		}
	}
}
