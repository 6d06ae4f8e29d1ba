package analysis

// This file judges git's configuration when it comes from the
// environment: GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n>, and GIT_CONFIG_PARAMETERS (what git -c hands to
// the git commands it starts). A setting whose value git runs as a command
// (core.sshCommand, core.pager, diff.external, a "!" alias...) is code,
// judged like git -c; a key or a value only known at run time is dynamic.
// The count is not trusted to limit the pairs: every pair the command (or
// its environment) gives is judged.

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// gitCodeKey reports whether git runs the value of setting k (lower case)
// as a command.
func gitCodeKey(k, v string) bool {
	switch k {
	case "core.sshcommand", "core.pager", "core.editor", "sequence.editor", "diff.external", "core.askpass",
		"gpg.program", "gpg.ssh.program", "gpg.x509.program", "interactive.difffilter", "diff.tool", "merge.tool":
		return k != "diff.tool" && k != "merge.tool"
	case "core.fsmonitor":
		return v != "true" && v != "false"
	case "credential.helper":
		return strings.HasPrefix(v, "!")
	}
	if strings.HasPrefix(k, "pager.") {
		return v != "true" && v != "false"
	}
	dot := strings.LastIndexByte(k, '.')
	if dot < 0 {
		return false
	}
	sect, last := k[:strings.IndexByte(k, '.')], k[dot+1:]
	switch {
	case sect == "filter" && (last == "clean" || last == "smudge" || last == "process"):
		return true
	case sect == "merge" && last == "driver", sect == "diff" && (last == "textconv" || last == "command"):
		return true
	case (sect == "difftool" || sect == "mergetool") && last == "cmd":
		return true
	case sect == "credential" && last == "helper":
		return strings.HasPrefix(v, "!")
	}
	return false
}

// gitSetting judges one git setting k=v (k in lower case) under n.
func (a *analyzer) gitSetting(n *Node, k string, v Arg, what string, sc *scope) {
	switch {
	case strings.HasPrefix(k, "alias."):
		// A shell alias is code whether or not this command calls it.
		if v.Dynamic {
			a.flag(n.ID, FlagDynamic, "%s defines git alias %s only known at run time", what, strings.TrimPrefix(k, "alias."))
		} else if strings.HasPrefix(v.Value, "!") {
			a.code(n, Arg{Value: strings.TrimPrefix(v.Value, "!")}, "git alias "+strings.TrimPrefix(k, "alias."), syntax.LangPOSIX, a.payloadScope(sc, n))
		}
	case k == "core.hookspath":
		a.flag(n.ID, FlagDynamic, "%s (core.hooksPath=%s) runs hooks from a directory analysis does not read", what, short(v.Value))
	case k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path"):
		a.flag(n.ID, FlagDynamic, "%s includes a configuration file analysis does not read: %s", what, short(v.Value))
	case v.Dynamic && gitCodeKey(k, ""):
		a.code(n, v, what, syntax.LangPOSIX, a.payloadScope(sc, n))
	case gitCodeKey(k, v.Value):
		a.code(n, Arg{Value: strings.TrimPrefix(v.Value, "!")}, what, syntax.LangPOSIX, a.payloadScope(sc, n))
	}
}

// gitEnvSetting records a GIT_CONFIG_* assignment of n, judged by
// flushGitEnv once n's assignments are all known.
func (a *analyzer) gitEnvSetting(n *Node, name string, val Arg, sc *scope) {
	if a.gitEnv == nil {
		a.gitEnv = map[int]map[string]Arg{}
	}
	m := a.gitEnv[n.ID]
	if m == nil {
		m = map[string]Arg{}
		a.gitEnv[n.ID] = m
	}
	m[name] = val
}

// envValues returns what the variable name may hold where n runs: local
// (n's own assignments), the environment, or every value the text assigns
// it. None: it is not set.
func (a *analyzer) envValues(name string, local map[string]Arg, sc *scope) []Arg {
	if v, ok := local[name]; ok {
		return []Arg{v}
	}
	var out []Arg
	if v := a.vars[name]; v != nil || a.tainted[name] {
		if v != nil {
			for _, s := range v.static {
				out = append(out, Arg{Value: s})
			}
		}
		if v == nil || v.unknown || len(v.elemsOf) > 0 {
			out = append(out, Arg{Value: "$" + name, Dynamic: true})
		}
		return out
	}
	if v, ok := sc.env.get(name); ok {
		if !v.known {
			return []Arg{{Value: "$" + name, Dynamic: true}}
		}
		return []Arg{{Value: v.val}}
	}
	return nil
}

// flushGitEnv judges the git settings n's GIT_CONFIG_* assignments make.
func (a *analyzer) flushGitEnv(n *Node, sc *scope) {
	local := a.gitEnv[n.ID]
	if local == nil {
		return
	}
	delete(a.gitEnv, n.ID)
	names := make([]string, 0, len(local))
	for k := range local {
		names = append(names, k)
	}
	slices.Sort(names)
	done := map[string]bool{}
	for _, name := range names {
		if name == "GIT_CONFIG_PARAMETERS" {
			a.gitParams(n, local[name], sc)
			continue
		}
		idx := strings.TrimPrefix(strings.TrimPrefix(name, "GIT_CONFIG_KEY_"), "GIT_CONFIG_VALUE_")
		if done[idx] {
			continue
		}
		done[idx] = true
		keys := a.envValues("GIT_CONFIG_KEY_"+idx, local, sc)
		vals := a.envValues("GIT_CONFIG_VALUE_"+idx, local, sc)
		what := "GIT_CONFIG_VALUE_" + idx
		for _, k := range keys {
			if k.Dynamic {
				a.flag(n.ID, FlagDynamic, "GIT_CONFIG_KEY_%s names a git setting only known at run time", idx)
				continue
			}
			for _, v := range vals {
				a.gitSetting(n, strings.ToLower(k.Value), v, what, sc)
			}
		}
		if len(keys) == 0 {
			for _, v := range vals {
				if v.Dynamic || v.Value != "" {
					a.flag(n.ID, FlagDynamic, "%s is the value of a git setting whose key (GIT_CONFIG_KEY_%s) is not known", what, idx)
					break
				}
			}
		}
	}
}

// gitParams judges GIT_CONFIG_PARAMETERS: 'key=value' words, as git -c
// passes them on.
func (a *analyzer) gitParams(n *Node, v Arg, sc *scope) {
	if v.Dynamic {
		a.flag(n.ID, FlagDynamic, "GIT_CONFIG_PARAMETERS holds git settings only known at run time")
		return
	}
	if strings.TrimSpace(v.Value) == "" {
		return
	}
	words, ok := a.splitWords(v.Value, sc)
	if !ok {
		a.flag(n.ID, FlagDynamic, "GIT_CONFIG_PARAMETERS analysis cannot split: %s", short(v.Value))
		return
	}
	// git writes 'key'='value' (one word) or 'key=value'.
	for _, w := range words {
		k, val, _ := strings.Cut(w.Value, "=")
		a.gitSetting(n, strings.ToLower(k), Arg{Value: val}, "GIT_CONFIG_PARAMETERS "+strings.ToLower(k), sc)
	}
}

// gitEnvAlias returns git alias name (lower case) as the environment of
// a git command defines it (GIT_CONFIG_KEY_<n>=alias.name).
func (a *analyzer) gitEnvAlias(name string, sc *scope) (Arg, bool) {
	want := "alias." + name
	check := func(key string) (Arg, bool) {
		idx, ok := strings.CutPrefix(key, "GIT_CONFIG_KEY_")
		if !ok {
			return Arg{}, false
		}
		for _, k := range a.envValues(key, nil, sc) {
			if !k.Dynamic && strings.ToLower(k.Value) == want {
				for _, v := range a.envValues("GIT_CONFIG_VALUE_"+idx, nil, sc) {
					return v, true
				}
			}
		}
		return Arg{}, false
	}
	for key := range sc.env.vals {
		if v, ok := check(key); ok {
			return v, true
		}
	}
	for key := range a.vars {
		if v, ok := check(key); ok {
			return v, true
		}
	}
	return Arg{}, false
}

// gitConfigFile judges the git configuration file that GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM or GIT_CONFIG names: read (and pinned) under the
// inspection roots, or as this command writes it.
func (a *analyzer) gitConfigFile(n *Node, name string, v Arg, sc *scope) {
	if v.Dynamic {
		a.flag(n.ID, FlagDynamic, "%s names a git configuration file only known at run time", name)
		return
	}
	if v.Value == "" || v.Value == "/dev/null" {
		return
	}
	ps := a.absPaths(v.Value, sc)
	if ps == nil {
		a.flag(n.ID, FlagScriptUnreadable, "%s=%s cannot be located: the working directory is not known", name, v.Value)
	}
	for _, p := range ps {
		text, f, exists, ok := a.runnerSource(n, p)
		if !exists || !ok {
			continue
		}
		for _, kv := range parseGitConfig(text) {
			a.gitSetting(n, kv[0], Arg{Value: kv[1]}, p+" "+kv[0], sc)
		}
		a.pinRunner(n, f, "gitconfig", nil)
	}
}

// parseGitConfig returns the settings of a git configuration file as
// lower-case section.key (the subsection as written) and value.
func parseGitConfig(text string) [][2]string {
	var out [][2]string
	section := ""
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(strings.TrimSuffix(lines[i], "\r"))
		if strings.HasPrefix(l, "[") {
			end := strings.IndexByte(l, ']')
			if end < 0 {
				continue
			}
			hdr := l[1:end]
			if sp := strings.IndexAny(hdr, " \t"); sp >= 0 {
				section = strings.ToLower(hdr[:sp]) + "." + strings.Trim(strings.TrimSpace(hdr[sp:]), `"`)
			} else {
				section = strings.ToLower(hdr)
			}
			l = strings.TrimSpace(l[end+1:])
		}
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = l[:len(l)-1] + strings.TrimSpace(lines[i])
		}
		k, v, _ := strings.Cut(l, "=")
		out = append(out, [2]string{section + "." + strings.ToLower(strings.TrimSpace(k)), gitConfigValue(strings.TrimSpace(v))})
	}
	return out
}

// gitConfigValue unquotes a value and drops a trailing comment.
func gitConfigValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
