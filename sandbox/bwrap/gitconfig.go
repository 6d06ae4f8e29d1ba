package bwrap

// What the sweep reads from git's own files, read as git reads them: a
// .git file's pointer and the keys of a configuration file.

import (
	"bufio"
	"bytes"
	"strings"
)

// parseGitFile returns the path a .git file names, as git reads it
// (setup.c, read_gitfile_gently): the content starts with "gitdir: ",
// trailing newlines and carriage returns are dropped, however many, and
// the path ends at the first NUL.
func parseGitFile(b []byte) (string, bool) {
	b = bytes.TrimRight(b, "\r\n")
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	if !ok || len(rest) == 0 {
		return "", false
	}
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) == 0 {
		return "", false
	}
	return string(rest), true
}

// configValue is one key of a git configuration file and its value.
type configValue struct{ key, value string }

// configValues returns the keys (section.[sub.]name, section and name in
// lower case) and values a git configuration file sets.
func configValues(conf []byte) []configValue {
	var out []configValue
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(conf))
	sc.Buffer(nil, gitFileMax+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = gitSection(line[1:end])
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		name, value, _ := strings.Cut(line, "=")
		out = append(out, configValue{
			key:   section + "." + strings.ToLower(strings.TrimSpace(name)),
			value: strings.Trim(strings.TrimSpace(value), `"`),
		})
	}
	return out
}

// execKeys returns the keys of a git configuration file that make git run
// a program, or redirect it to configuration or hooks elsewhere.
func execKeys(conf []byte) []string {
	var keys []string
	for _, kv := range configValues(conf) {
		if execKey(kv.key, kv.value) {
			keys = append(keys, kv.key)
		}
	}
	return keys
}

// gitSection turns `core`, `filter "lfs"` or `remote.origin` into the
// lower-case section prefix of its keys ("filter.lfs"); a subsection keeps
// its case, as git's does, but execKey ignores it.
func gitSection(s string) string {
	name, sub, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return strings.ToLower(s)
	}
	return strings.ToLower(name) + "." + strings.Trim(strings.TrimSpace(sub), `"`)
}

// execKey reports whether the configuration key (section.[sub.]name) with
// value makes git run a program or read configuration from elsewhere.
func execKey(key, value string) bool {
	section, rest, _ := strings.Cut(key, ".")
	name := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		name = rest[i+1:]
	}
	switch section {
	case "core":
		switch name {
		case "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "worktree":
			return true
		case "fsmonitor":
			v := strings.ToLower(value)
			return v != "true" && v != "false" && v != "" && v != "0" && v != "1"
		}
	case "alias":
		return strings.HasPrefix(value, "!")
	case "hook":
		return name == "command" // configuration-defined hooks
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "external" || name == "command" || name == "textconv"
	case "merge", "mergetool", "difftool":
		return name == "driver" || name == "cmd"
	case "include", "includeif":
		return name == "path"
	case "pager":
		v := strings.ToLower(value)
		return v != "true" && v != "false" && v != "" && v != "0" && v != "1" && v != "yes" && v != "no" && v != "on" && v != "off"
	case "credential", "gpg", "sequence", "interactive", "web", "browser", "man", "uploadpack":
		switch name {
		case "helper", "program", "editor", "difffilter", "browser", "cmd", "path", "packobjectshook":
			return true
		}
	case "remote":
		return name == "uploadpack" || name == "receivepack" || name == "url" && strings.HasPrefix(value, "ext::") ||
			name == "proxy" && strings.HasPrefix(value, "ext::")
	case "url":
		return strings.HasPrefix(rest, "ext::")
	}
	return false
}
