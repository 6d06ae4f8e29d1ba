package analysis

// This file is the table of commands analysis knows more about, and which
// function applies that knowledge.

// A handler applies what analysis knows about one command.
type handler func(a *analyzer, n *Node, sc *scope)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"cd": (*analyzer).cd, "pushd": (*analyzer).cd, "popd": (*analyzer).cd,
		"alias":   (*analyzer).alias,
		"eval":    (*analyzer).eval,
		"trap":    (*analyzer).trap,
		"source":  (*analyzer).source,
		".":       (*analyzer).source,
		"exit":    (*analyzer).exit,
		"return":  (*analyzer).exit,
		"exec":    (*analyzer).execBuiltin,
		"command": (*analyzer).commandBuiltin,
		"builtin": func(a *analyzer, n *Node, sc *scope) { a.payload(n, "builtin", n.Argv[1:], sc) },
		"hash":    (*analyzer).hash,
		"enable":  (*analyzer).enable,
		"find":    (*analyzer).find,
		"xargs":   (*analyzer).xargs,
		"git":     (*analyzer).git,
		"env":     (*analyzer).env,
		"watch":   (*analyzer).watch,
		"su":      (*analyzer).su,
		"flock":   (*analyzer).flock,
		"busybox": func(a *analyzer, n *Node, sc *scope) { a.payload(n, "busybox", n.Argv[1:], sc) },
		"set":     (*analyzer).set,
	}
	handlers["make"], handlers["gmake"] = (*analyzer).makeCmd, (*analyzer).makeCmd
	for _, name := range []string{"npm", "yarn", "pnpm"} {
		handlers[name] = (*analyzer).npm
	}
	for name := range runnerFiles {
		handlers[name] = (*analyzer).otherRunner
	}
	for name, spec := range wrapSpecs {
		handlers[name] = func(a *analyzer, n *Node, sc *scope) { a.wrapper(n, name, spec, sc) }
	}
}
