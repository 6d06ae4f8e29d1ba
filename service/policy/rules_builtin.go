package policy

import (
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// A BuiltinRule ships with Gatehouse and applies to every command unless
// policy.disabled_builtin_rules names it. Built-in rules are judged besides
// the configured rules: a user rule that allows a command does not turn one
// off, only disabling it by name does. Each denies one shape that command
// analysis marks on nodes.
type BuiltinRule struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	// Shape is what the rule matches.
	Shape analysis.Shape `json:"-"`
	// Reason is shown to the agent when the rule blocks a command.
	Reason string `json:"reason"`
}

// BuiltinRules are the built-in rules, all on by default.
var BuiltinRules = []BuiltinRule{
	{"rm-root", ActionDeny, analysis.ShapeRmRoot,
		"recursive rm of /, your home directory or a top-level system directory (in any spelling: ~, $HOME, /*, ..) deletes all of it; remove the specific files or directories you mean"},
	{"find-delete-root", ActionDeny, analysis.ShapeFindDeleteRoot,
		"find -delete (or -exec rm) starting at /, your home directory or a top-level system directory deletes everything it finds; start it in the directory you mean"},
	{"disk-write", ActionDeny, analysis.ShapeDiskWrite,
		"writing to a disk device, formatting (mkfs) or wiping a filesystem (wipefs, shred of a device) destroys its data"},
	{"chmod-recursive-root", ActionDeny, analysis.ShapeChmodRoot,
		"recursive chmod, chown or chgrp of /, your home directory or a top-level system directory breaks permissions everywhere below it"},
	{"curl-pipe-shell", ActionDeny, analysis.ShapeCurlPipeShell,
		"code fetched from the network (curl, wget...) is run without being read first; download it to a file, read it, then run that file"},
	{"decode-pipe-shell", ActionDeny, analysis.ShapeDecodePipeShell,
		"decoded data (base64 -d, xxd -r, openssl enc -d...) is run as code, which hides what it does; run the decoded commands themselves"},
	{"shell-rc-write", ActionDeny, analysis.ShapeShellRCWrite,
		"writing a shell startup file (~/.bashrc, ~/.profile, ~/.zshrc, /etc/profile...) makes code run later, outside any sandbox"},
	{"git-force-push-protected", ActionDeny, analysis.ShapeForcePushProtected,
		"force-pushing or deleting a protected branch (main, master, trunk, develop, production, release/*) rewrites shared history; push to a branch of your own"},
	{"secret-exfiltration", ActionDeny, analysis.ShapeSecretExfiltration,
		"a credential file (~/.ssh, ~/.aws, ~/.netrc, ~/.config/gcloud...) is sent to the network"},
	{"fork-bomb", ActionDeny, analysis.ShapeForkBomb,
		"a function that runs itself in a background pipeline exhausts the process table"},
}

// BuiltinRuleNames returns the names of the built-in rules, in order.
func BuiltinRuleNames() []string {
	out := make([]string, len(BuiltinRules))
	for i, r := range BuiltinRules {
		out[i] = r.Name
	}
	return out
}

// LookupBuiltinRule returns the built-in rule called name.
func LookupBuiltinRule(name string) (BuiltinRule, bool) {
	for _, r := range BuiltinRules {
		if r.Name == name {
			return r, true
		}
	}
	return BuiltinRule{}, false
}

// BuiltinEnabled reports whether the built-in rule name is on under p.
func (p *Policy) BuiltinEnabled(name string) bool {
	return !slices.Contains(p.DisabledBuiltinRules, name)
}

// validateDisabledBuiltins checks that every entry of
// policy.disabled_builtin_rules names a built-in rule, once.
func (v *validator) validateDisabledBuiltins(p string, names []string) {
	for i, n := range names {
		switch {
		case !slices.Contains(BuiltinRuleNames(), n):
			v.failItemf(p, i, "%q is not a built-in rule; they are %s", n, strings.Join(BuiltinRuleNames(), ", "))
		case slices.Contains(names[:i], n):
			v.failItemf(p, i, "%q is listed twice; remove one", n)
		}
	}
}

// ScriptInspectionRootsEffective returns the directories whose scripts
// command analysis reads: policy.script_inspection_roots, or the workspace
// roots when that is empty. The result is a new slice.
func (c *Config) ScriptInspectionRootsEffective() []string {
	if len(c.Policy.ScriptInspectionRoots) == 0 {
		return c.WorkspaceRootsEffective()
	}
	return append([]string(nil), c.Policy.ScriptInspectionRoots...)
}
