package analysis

// This file unwraps commands whose payload is another command (env, xargs,
// find -exec, nice, timeout, sudo, …): their option tables and the
// payload they run.

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// payload makes a child node of n for the command a wrapper runs.
func (a *analyzer) payload(n *Node, via string, argv []Arg, sc *scope) *Node {
	if len(argv) == 0 || a.stopped {
		return nil
	}
	c := &Node{
		ID: len(a.tree.Nodes), Parent: n.ID, Via: via, Kind: KindCommand,
		Source: n.Source, Line: n.Line, Col: n.Col, Context: slices.Clone(n.Context),
		pipeline: n.pipeline, stdinFrom: slices.Clone(n.stdinFrom), script: n.script,
	}
	a.tree.Nodes = append(a.tree.Nodes, c)
	c.Argv = argv
	psc := sc.child("", nil)
	psc.parent = n.ID
	psc.top = false
	a.command(c, psc)
	return c
}

// find: -exec/-execdir/-ok/-okdir run a command per file; {} is the file.
func (a *analyzer) find(n *Node, sc *scope) {
	args := n.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			continue
		}
		switch v {
		case "-delete":
			n.findDelete = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].Value == ";" || args[j].Value == "+") {
				j++
			}
			argv := slices.Clone(args[i+1 : j])
			for k, x := range argv {
				if strings.Contains(x.Value, "{}") {
					argv[k] = Arg{Value: x.Value, Dynamic: true, ifEmpty: strings.ReplaceAll(x.Value, "{}", ""), hasIfEmpty: true}
				}
			}
			if j >= len(args) {
				a.note(n.ID, "find "+v+" without a terminating ; or +")
			}
			psc := sc.child("", nil)
			psc.stdin = stdinSrc{kind: "none"}
			if c := a.payload(n, "find "+v, argv, psc); c != nil {
				switch c.Name {
				case "rm", "unlink", "shred", "rmdir":
					n.findDelete = true
				}
			}
			i = j
		}
	}
}

// xargs runs a command with arguments read from stdin.
func (a *analyzer) xargs(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "0rtpxo", shortVal: "ILPnsdEa", shortOpt: "iel",
		long:    []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"},
		longVal: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longOpt: []string{"replace", "eof", "max-lines"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "xargs with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) == 0 {
		rest = []Arg{{Value: "echo"}}
	}
	argv := slices.Clone(rest)
	repl := ""
	if v, ok := res.vals["I"]; ok {
		repl = v
	} else if v, ok := res.vals["i"]; ok {
		repl = orDefault(v, "{}")
	} else if v, ok := res.vals["replace"]; ok {
		repl = orDefault(v, "{}")
	}
	input := []Arg{{Value: "<input>", Dynamic: true, ifEmpty: "", hasIfEmpty: true}}
	// xargs CMD <<< WORDS, echo WORDS | xargs CMD: the input is known.
	if in := sc.stdin; in.kind == "text" && !in.text.Dynamic && !res.has("0") && !res.has("d") && !res.has("null") && !res.has("delimiter") && !strings.ContainsAny(in.text.Value, `'"\\`) {
		input = nil
		for _, w := range strings.Fields(in.text.Value) {
			input = append(input, Arg{Value: w})
		}
	} else if in.kind == "pipe" && len(in.from) == 1 && !res.has("0") && !res.has("d") && !res.has("null") && !res.has("delimiter") {
		if f := a.node(in.from[0]); f != nil && f.Kind == KindCommand {
			if out := f.out; out != nil && !strings.ContainsAny(out.Value, `'"\`) {
				input = nil
				for _, w := range strings.Fields(out.Value) {
					input = append(input, Arg{Value: w})
				}
			}
		}
	}
	if repl != "" {
		for k, x := range argv {
			if k > 0 && strings.Contains(x.Value, repl) {
				argv[k] = Arg{Value: x.Value, Dynamic: true, ifEmpty: strings.ReplaceAll(x.Value, repl, ""), hasIfEmpty: true}
			}
		}
	} else {
		argv = append(argv, input...)
	}
	psc := sc.child("", nil)
	if !res.has("o") && !res.has("open-tty") {
		psc.stdin = stdinSrc{kind: "none"}
	}
	a.payload(n, "xargs", argv, psc)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [command [args]]
func (a *analyzer) env(n *Node, sc *scope) {
	args := slices.Clone(n.Argv[1:])
	envm := sc.env
	psc := sc.child("", nil)
	for len(args) > 0 {
		x := args[0]
		if x.Dynamic {
			a.flag(n.ID, FlagDynamic, "env with an argument only known at run time before the command: %s", short(x.Value))
			break
		}
		v := x.Value
		switch {
		case v == "--":
			args = args[1:]
			goto payload
		case v == "-" || v == "-i" || v == "--ignore-environment":
			envm = newEnv(nil)
			args = args[1:]
		case v == "-0" || v == "--null" || v == "-v" || v == "--debug":
			args = args[1:]
		case v == "-u" || v == "--unset" || v == "-C" || v == "--chdir" || v == "-P" || v == "-a" || v == "--argv0":
			if len(args) < 2 {
				return
			}
			if v == "-u" || v == "--unset" {
				envm = envm.with(args[1].Value, nil)
			}
			if v == "-C" || v == "--chdir" {
				psc.st = &state{cwds: a.absPaths(args[1].Value, sc), known: !args[1].Dynamic && sc.st.known, path: sc.st.path, pathKnown: sc.st.pathKnown}
			}
			if v == "-P" {
				psc.pathOverride = []pathEntry{{dynamic: args[1].Dynamic, dir: args[1].Value, added: true}}
			}
			args = args[2:]
		case strings.HasPrefix(v, "--unset=") || strings.HasPrefix(v, "-u"):
			name := strings.TrimPrefix(strings.TrimPrefix(v, "--unset="), "-u")
			envm = envm.with(name, nil)
			args = args[1:]
		case v == "-S" || v == "--split-string" || strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "--split-string="):
			var s Arg
			switch {
			case v == "-S" || v == "--split-string":
				if len(args) < 2 {
					return
				}
				s, args = args[1], args[2:]
			case strings.HasPrefix(v, "--split-string="):
				s, args = Arg{Value: strings.TrimPrefix(v, "--split-string=")}, args[1:]
			default:
				s, args = Arg{Value: v[2:]}, args[1:]
			}
			if s.Dynamic {
				a.flag(n.ID, FlagDynamic, "env -S splits a string only known at run time into the command")
				return
			}
			words, ok := a.splitWords(s.Value, sc)
			if !ok {
				a.flag(n.ID, FlagDynamic, "env -S string analysis cannot split: %s", short(s.Value))
				return
			}
			args = append(words, args...)
		case strings.HasPrefix(v, "--default-signal") || strings.HasPrefix(v, "--ignore-signal") || strings.HasPrefix(v, "--block-signal") || v == "--list-signal-handling":
			args = args[1:]
		case strings.HasPrefix(v, "-") && len(v) > 1:
			a.flag(n.ID, FlagDynamic, "env with an option analysis does not know: %s", v)
			args = args[1:]
		case strings.IndexByte(v, '=') > 0:
			// env takes any NAME=VALUE, BASH_FUNC_f%%=() {...} included.
			name, val, _ := strings.Cut(v, "=")
			envm = envm.with(name, &envVal{val: val, known: true})
			a.specialVar(n, name, Arg{Value: val}, sc)
			if name == "PATH" {
				st := &state{path: slices.Clone(sc.st.path), pathKnown: sc.st.pathKnown}
				a.setPath(n, Arg{Value: val}, sc, st)
				psc.pathOverride = st.path
			}
			args = args[1:]
		default:
			goto payload
		}
	}
payload:
	psc.env = envm
	a.payload(n, "env", args, psc)
}

// splitWords splits s into words as a shell would (env -S, git aliases).
func (a *analyzer) splitWords(s string, sc *scope) ([]Arg, bool) {
	f, err := a.parse(s, syntax.LangPOSIX)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[0].Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, false
	}
	u := &unit{src: s, source: "env -S", lang: syntax.LangPOSIX, depth: sc.u.depth + 1}
	c := sc.child("", nil)
	c.u = u
	var out []Arg
	for _, w := range call.Args {
		for _, x := range a.fields(w, c, -1, nil) {
			if x.Dynamic {
				return nil, false
			}
			out = append(out, x)
		}
	}
	return out, true
}

// watch runs its arguments through sh -c (or directly with -x).
func (a *analyzer) watch(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "bcCdegtxprw", shortVal: "nq",
		long:    []string{"beep", "color", "no-color", "chgexit", "errexit", "no-title", "exec", "precise", "no-wrap", "differences"},
		longVal: []string{"interval", "equexit"},
		longOpt: []string{"differences"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "watch with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) == 0 {
		return
	}
	if res.has("x") || res.has("exec") {
		a.payload(n, "watch", rest, sc)
		return
	}
	s := Arg{Value: strings.Join(values(rest), " ")}
	for _, x := range rest {
		if x.Dynamic {
			s = Arg{Value: a.joinSrc(rest), Dynamic: true, subs: collectSubs(rest)}
		}
	}
	a.code(n, s, "watch", syntax.LangPOSIX, a.payloadScope(sc, n))
}

// su [-] [user] -c CMD runs CMD with the user's shell.
func (a *analyzer) su(n *Node, sc *scope) {
	args := n.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-c" || v == "--command" || v == "--session-command":
			if i+1 < len(args) {
				a.code(n, args[i+1], "su -c", syntax.LangPOSIX, a.payloadScope(sc, n))
			}
			return
		case strings.HasPrefix(v, "--command="):
			a.code(n, Arg{Value: strings.TrimPrefix(v, "--command=")}, "su -c", syntax.LangPOSIX, a.payloadScope(sc, n))
			return
		case v == "-s" || v == "--shell" || v == "-g" || v == "--group" || v == "-G" || v == "-w":
			i++
		}
	}
}

// flock [opts] file command [args] | flock [opts] file -c command
func (a *analyzer) flock(n *Node, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], optSpec{
		short: "sexnuoFv", shortVal: "wE",
		long:    []string{"shared", "exclusive", "nonblock", "unlock", "close", "no-fork", "verbose"},
		longVal: []string{"timeout", "conflict-exit-code"},
	})
	if !res.known {
		a.flag(n.ID, FlagDynamic, "flock with an option analysis does not know: %s", res.unknown)
	}
	if len(rest) < 2 {
		return
	}
	rest = rest[1:]
	if rest[0].Value == "-c" || rest[0].Value == "--command" {
		if len(rest) > 1 {
			a.code(n, rest[1], "flock -c", syntax.LangPOSIX, a.payloadScope(sc, n))
		}
		return
	}
	a.payload(n, "flock", rest, sc)
}

// wrapper handles a wrapper described by spec.
func (a *analyzer) wrapper(n *Node, name string, spec optSpec, sc *scope) {
	rest, res := parseOpts(n.Argv[1:], spec)
	if !res.known {
		a.flag(n.ID, FlagDynamic, "%s with an option analysis does not know: %s", name, res.unknown)
	}
	for _, f := range spec.noPayload {
		if res.has(f) {
			return
		}
	}
	psc := sc.child("", nil)
	// Assignments before the command (sudo VAR=x cmd).
	if spec.assigns {
		for len(rest) > 0 && !rest[0].Dynamic && strings.IndexByte(rest[0].Value, '=') > 0 && !strings.HasPrefix(rest[0].Value, "-") {
			k, v, _ := strings.Cut(rest[0].Value, "=")
			psc.env = psc.env.with(k, &envVal{val: v, known: true})
			a.specialVar(n, k, Arg{Value: v}, sc)
			rest = rest[1:]
		}
	}
	skip := spec.skip
	if name == "nice" && len(n.Argv) > 1 && isNiceNumber(n.Argv[1].Value) {
		skip = 0
	}
	if len(rest) < skip {
		return
	}
	rest = rest[skip:]
	if len(rest) == 0 {
		return
	}
	if spec.shellFlag != "" && res.has(spec.shellFlag) {
		// sudo -s cmd args: the user's shell runs "cmd args".
		a.note(n.ID, name+" -"+spec.shellFlag+" runs the command through a shell")
	}
	a.payload(n, name, rest, psc)
}

func isNiceNumber(s string) bool {
	return len(s) > 1 && s[0] == '-' && isDigits(strings.TrimPrefix(s[1:], "-"))
}

// optSpec describes a command's options.
type optSpec struct {
	short    string   // letters taking no value
	shortVal string   // letters taking a value (attached or next)
	shortOpt string   // letters taking an optional attached value
	long     []string // long options without value
	longVal  []string // long options with a value (=v or next)
	longOpt  []string // long options with an optional =value
	// skip is how many operands come before the payload (timeout's
	// DURATION, chrt's priority, flock's file).
	skip int
	// assigns: NAME=VALUE operands may precede the payload.
	assigns bool
	// noPayload are options after which nothing runs (sudo -l).
	noPayload []string
	// shellFlag runs the payload through a shell (sudo -s).
	shellFlag string
	// numeric: -N options (nice -10).
	numeric bool
}

// optResult is what parseOpts found.
type optResult struct {
	known   bool
	unknown string
	vals    map[string]string
}

func (r optResult) has(o string) bool { _, ok := r.vals[o]; return ok }

// parseOpts skips the options of args (argv[1:]) per spec and returns the
// operands after them.
func parseOpts(args []Arg, spec optSpec) ([]Arg, optResult) {
	res := optResult{known: true, vals: map[string]string{}}
	for i := 0; i < len(args); i++ {
		x := args[i]
		v := x.Value
		if x.Dynamic {
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, `"-`) || strings.HasPrefix(v, "$") {
				res.known, res.unknown = false, short(v)
			}
			return args[i:], res
		}
		switch {
		case v == "--":
			return args[i+1:], res
		case v == "-" || !strings.HasPrefix(v, "-"):
			return args[i:], res
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			switch {
			case slices.Contains(spec.longVal, name):
				if !hasVal {
					if i+1 < len(args) {
						i++
						val = args[i].Value
					}
				}
				res.vals[name] = val
			case slices.Contains(spec.long, name) || slices.Contains(spec.longOpt, name):
				res.vals[name] = val
			default:
				res.known, res.unknown = false, v
				res.vals[name] = val
			}
		default:
			if spec.numeric && isNiceNumber(v) {
				res.vals["n"] = v[1:]
				continue
			}
			letters := v[1:]
			for j := 0; j < len(letters); j++ {
				c := string(letters[j])
				switch {
				case strings.Contains(spec.shortVal, c):
					val := letters[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i].Value
					}
					res.vals[c] = val
					j = len(letters)
				case strings.Contains(spec.shortOpt, c):
					res.vals[c] = letters[j+1:]
					j = len(letters)
				case strings.Contains(spec.short, c):
					res.vals[c] = ""
				default:
					res.known, res.unknown = false, v
					res.vals[c] = ""
				}
			}
		}
	}
	return nil, res
}

// wrapSpecs are the wrappers whose payload follows their options.
var wrapSpecs = map[string]optSpec{
	"sudo": {
		short: "AbEeHhiKklnPSsVv", shortVal: "CDgprtTUuR",
		long: []string{"askpass", "background", "edit", "help", "login", "non-interactive", "preserve-groups",
			"remove-timestamp", "reset-timestamp", "shell", "stdin", "version", "validate", "list", "bell"},
		longVal:   []string{"close-from", "chdir", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user", "chroot"},
		longOpt:   []string{"preserve-env"},
		assigns:   true,
		noPayload: []string{"l", "list", "v", "validate", "k", "K", "e", "edit", "V", "version", "help"},
		shellFlag: "s",
	},
	"doas":     {short: "nsL", shortVal: "uC", noPayload: []string{"L"}},
	"pkexec":   {longVal: []string{"user"}, long: []string{"disable-internal-agent", "keep-cwd", "version", "help"}},
	"nice":     {shortVal: "n", longVal: []string{"adjustment"}, numeric: true},
	"nohup":    {},
	"setsid":   {short: "cfw", long: []string{"ctty", "fork", "wait"}},
	"unbuffer": {short: "p"},
	"timeout": {short: "v", shortVal: "sk", long: []string{"preserve-status", "foreground", "verbose"},
		longVal: []string{"signal", "kill-after"}, skip: 1},
	"time": {short: "apvq", shortVal: "of", long: []string{"append", "portability", "verbose", "quiet"},
		longVal: []string{"output", "format"}},
	"stdbuf": {shortVal: "ioe", longVal: []string{"input", "output", "error"}},
	"ionice": {short: "th", shortVal: "cnpPu", longVal: []string{"class", "classdata", "pid", "pgid", "uid"},
		long: []string{"ignore"}, noPayload: []string{"p", "P", "u", "pid", "pgid", "uid"}},
	"chrt": {short: "abdefiormRv", shortVal: "TPD", long: []string{"all-tasks", "batch", "deadline", "fifo", "idle",
		"other", "rr", "reset-on-fork", "verbose", "max"}, longVal: []string{"sched-runtime", "sched-period", "sched-deadline"},
		skip: 1, noPayload: []string{"p", "pid", "m", "max"}},
	"taskset":    {short: "acp", long: []string{"all-tasks", "cpu-list"}, skip: 1, noPayload: []string{"p", "pid"}},
	"chroot":     {longVal: []string{"userspec", "groups"}, long: []string{"skip-chdir"}, skip: 1},
	"caffeinate": {short: "dimsu", shortVal: "tw"},
	"runuser":    {short: "lmpf", shortVal: "ugGsw", longVal: []string{"user", "group", "supp-group", "shell", "whitelist-environment"}, long: []string{"login", "preserve-environment"}},
	"strace":     {short: "cCdDfFhiqrtTvVxyz", shortVal: "abeEIoOpPsSuX"},
	"ltrace":     {short: "bcCfhiLrStT", shortVal: "aADeEFlnopsuwx"},
	"firejail":   {},
	"proot":      {},
}
