// Package argvcred finds credentials a command would put on a process's
// argument list, where every user of the machine can read them (ps,
// /proc/PID/cmdline): a credential variable expanded into a command's
// words, in the text, a pinned script, code the command defers (traps,
// prompts, exported functions, git settings) or a script it writes and
// runs. It walks the units of shell code the analysis tree already parsed
// (analysis.Tree.ParsedUnit) and parses only what the tree does not hold.
package argvcred
