package policy

// This file enforces the managed file's authority: a value it sets may be
// narrowed by the user file, never widened. Values are compared by what
// they mean, not by their text: paths where their symlinks lead
// (resolve.go), egress entries as the proxy parses them, ports as numbers.
//
//	numbers (timeouts, limits)      user ≤ managed
//	exec.enabled                    managed false locks it false
//	exec.sandbox.allow_ptrace       managed false locks it false
//	policy.sandbox_required         managed true locks it true
//	exec.shell                      managed value locks it
//	exec.sandbox.bwrap_path,        managed value locks it; under a managed
//	exec.sandbox.init_path          backend, seccomp or sandbox_required
//	                                only the managed file may set it
//	exec.sandbox.backend            none < auto < bubblewrap, seatbelt; a
//	                                managed concrete backend locks it
//	exec.sandbox.seccomp            off < preferred < required
//	exec.sandbox.read               host < workspace
//	exec.sandbox.read_allow         each entry resolves inside a managed
//	                                entry, under a managed read_allow or
//	                                read: workspace (none under a managed
//	                                read: workspace without a list)
//	exec.sandbox.settings_file      managed value locks it
//	exec.output.terminal_controls   keep < escape
//	exec.default_cwd                resolves inside the managed directory
//	policy.workspace_roots          each entry resolves inside a managed
//	                                entry, or inside the managed default_cwd
//	                                when the managed file sets that and no
//	                                roots (it is then the only root); an
//	                                empty user list keeps the managed one
//	policy.script_inspection_roots  each entry resolves inside a managed
//	                                entry; a managed empty list means the
//	                                workspace roots and bounds as they do
//	exec.env.agent_settable         a subset of the managed list
//	deny_read, write_deny,          unioned, so nothing to check
//	exec.egress.denied_cidrs
//	policy.rules                    unioned; managed rules are their own
//	                                tier; no user allow rule under a
//	                                managed default_action ask or deny; a
//	                                user rule with flags [dynamic] no less
//	                                strict than a managed dynamic_action
//	disabled_builtin_rules          a subset of the managed list
//	policy.default_action,          allow < ask < deny
//	policy.dynamic_action
//	policy.builtin_exec_routing     framework < governed_shell
//	policy.command_analysis_mode    off < enforce
//	exec.notify.*                   managed true locks it true
//	exec.audit.*                    managed value locks it
//	exec.audit.export.otlp.*        a managed endpoint locks the whole
//	                                section (export.go): never off, never
//	                                elsewhere; else a managed value locks it
//	policy.credential_mode          any < mask
//	exec.egress.upstream_ca_files   a subset of the managed list
//	exec.dashboard.enabled          managed false locks it false
//	exec.dashboard.port             managed value locks it
//	exec.credentials.env, .files,   every managed entry kept unchanged;
//	policy.dlp_patterns             the user may add entries
//	policy.credential_grants        every managed grant kept, to a subset
//	                                of its agents; the user may add grants
//	exec.egress.allowed_ports       a subset of the managed ports (the
//	                                default 443 and 80 when the managed file
//	                                sets an allowlist but no ports): they
//	                                are what a bare managed host allows
//	policy.egress_allowlist         every host and port an entry allows is
//	                                allowed by a managed entry; "*" covers
//	                                names, never an IP literal or localhost
//	policy.egress_allowlist_by_agent every managed agent's list kept; each
//	                                entry covered by the managed list the
//	                                agent would otherwise get (egress.go)
//	policy.egress_unknown           ask < deny
//	policy.egress_denylist          unioned, so nothing to check
//	saved policy.egress_allowlist   each entry covered by the managed list
//	                                (an approval grants nothing outside it)
//
// Fields the managed file does not set are free, except where the table
// says a managed field bounds them: a free field must not change what a
// managed one means. Values that are invalid in themselves (an unknown
// backend, a relative path) are left to validation. The workspace roots
// are judged again where they resolve at each execution (resolve.go).

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/scale"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// narrow checks that the value user sets for the leaf field p narrows the
// value managed sets for it, and returns an error for each way it widens it.
func narrow(p string, user, managed *layer) []error {
	uv, mv := leafValue(&user.vals, p), leafValue(&managed.vals, p)
	us, ms := user.source(p), managed.source(p)
	if strings.HasPrefix(p, exportPrefix) {
		return narrowExport(p, user, managed)
	}
	widens := func(allowed string, args ...any) []error {
		return []error{errAt(us, p, "%s widens the managed value %s (%s); %s",
			showValue(uv), showValue(mv), ms, fmt.Sprintf(allowed, args...))}
	}
	switch p {
	case "policy.builtin_exec_routing":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, routings)
	case "policy.command_analysis_mode":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, analysisModes)
	case "policy.default_action", "policy.dynamic_action":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, Actions)
	case "policy.rules":
		return narrowRules(p, user, managed)
	case "policy.disabled_builtin_rules":
		return narrowDisabledBuiltins(p, user, managed)
	case "exec.credentials.env":
		return narrowCredMap(p, uv.(CredentialEnv), mv.(CredentialEnv), us, ms)
	case "exec.credentials.files":
		return narrowCredMap(p, uv.(CredentialFiles), mv.(CredentialFiles), us, ms)
	case "policy.credential_mode":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, credentialModes)
	case "policy.egress_unknown":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, EgressUnknownModes)
	case "exec.egress.upstream_ca_files":
		var errs []error
		for i, u := range uv.([]string) {
			if !slices.Contains(mv.([]string), u) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%s is not in the managed list %s (%s); the proxy trusts only the authorities IT lists", showPath(u), quoteList(mv.([]string)), ms))
			}
		}
		return errs
	case "policy.dlp_patterns":
		return narrowMap(p, uv.(DLPPatterns), mv.(DLPPatterns), us, ms)
	case "policy.credential_grants":
		return narrowGrants(p, uv.(CredentialGrants), mv.(CredentialGrants), us, ms)
	case "exec.notify.sandbox_degraded", "exec.notify.output_redacted":
		if mv.(bool) && !uv.(bool) {
			return widens("only true is allowed")
		}
	case "exec.audit.keep_output", "exec.audit.retention_days", "exec.audit.retention_events", "exec.audit.output_max_bytes":
		// What the record keeps is IT's to say: a managed value is locked.
		if uv != mv {
			return []error{errAt(us, p, "%s differs from the managed value %s (%s); only %s is allowed", showValue(uv), showValue(mv), ms, showValue(mv))}
		}
	case "exec.egress.allowed_ports":
		// The ports a bare managed host allows are the managed file's
		// (the default when it sets none): a user port outside them would
		// open every bare managed host on it.
		m, ms := managedPorts(managed)
		var errs []error
		for i, u := range uv.([]int) {
			if !slices.Contains(m, u) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%d is not in the managed list %v (%s); use ports from that list", u, m, ms))
			}
		}
		return errs
	case "policy.egress_allowlist_by_agent":
		return narrowEgressByAgent(p, user, managed)
	case "policy.egress_allowlist":
		m := mv.([]string)
		mp, _ := managedPorts(managed)
		up := userPorts(user, managed)
		var errs []error
		for i, u := range uv.([]string) {
			if !egressCovered(u, m, up, mp) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%q is not allowed by the managed list %s (%s); use entries that list covers", u, quoteList(m), ms))
			}
		}
		return errs
	case "exec.dashboard.port":
		if uv != mv {
			return []error{errAt(us, p, "%s differs from the managed value %s (%s); only %s is allowed", showValue(uv), showValue(mv), ms, showValue(mv))}
		}
	case "exec.enabled", "exec.sandbox.allow_ptrace", "exec.dashboard.enabled":
		if !mv.(bool) && uv.(bool) {
			return widens("only false is allowed")
		}
	case "policy.sandbox_required":
		if mv.(bool) && !uv.(bool) {
			return widens("only true is allowed")
		}
	case "policy.audit_required": // managed true locks it true
		if mv.(bool) && !uv.(bool) {
			return widens("only true is allowed")
		}
	case "exec.sandbox.bwrap_path", "exec.sandbox.init_path":
		if f := managedSandboxField(managed); !managed.has(p) && uv != "" && f != "" {
			// Another binary would run under the managed sandbox settings'
			// name: the event would say bubblewrap (and the init's seccomp
			// stage) whatever it did.
			what := "bubblewrap"
			if p == "exec.sandbox.init_path" {
				what = "Gatehouse's sandbox init"
			}
			return []error{errAt(us, p, "%q may not replace %s under the managed %s (%s); only the managed file may set %s", uv, what, f, managed.source(f), p)}
		}
		if managed.has(p) && uv != mv {
			return []error{errAt(us, p, "%q differs from the managed value %q (%s); only %q is allowed", uv, mv, ms, mv)}
		}
	case "exec.sandbox.read":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, sandbox.ReadPostures)
	case "exec.sandbox.read_allow":
		// What a managed read: workspace keeps hidden stays hidden: only
		// what the managed file lets commands read may be listed.
		m := managed.vals.Exec.Sandbox.ReadAllow
		ms := managed.source(p)
		if !managed.has(p) {
			if managed.vals.Exec.Sandbox.Read != ReadWorkspace {
				return nil // a managed host posture hides nothing
			}
			m, ms = nil, managed.source("exec.sandbox.read")
		}
		real := ResolveEach(m)
		allowed := "use one of those paths or one inside them"
		if len(m) == 0 {
			allowed = "the managed file allows none"
		}
		var errs []error
		for i, u := range uv.([]string) {
			if !path.IsAbs(u) {
				continue // validation reports it
			}
			ru := Resolve(u)
			if !slices.ContainsFunc(real, func(r string) bool { return sandbox.Within(ru, r) }) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%s is outside the managed list %s (%s); %s", showPath(u), quoteList(m), ms, allowed))
			}
		}
		return errs
	case "exec.shell", "exec.sandbox.settings_file":
		if uv != mv {
			return []error{errAt(us, p, "%q differs from the managed value %q (%s); only %q is allowed", uv, mv, ms, mv)}
		}
	case "exec.sandbox.backend":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, sandbox.Backends)
	case "exec.output.terminal_controls":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, termControls)
	case "exec.sandbox.seccomp":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, sandbox.SeccompLevels)
	case "exec.default_cwd":
		u, m := uv.(string), mv.(string)
		if path.IsAbs(u) && path.IsAbs(m) && !sandbox.Within(Resolve(u), Resolve(m)) {
			return []error{errAt(us, p, "%s is outside the managed value %s (%s); use that directory or one inside it", showPath(u), showPath(m), ms)}
		}
	case "policy.workspace_roots", "policy.script_inspection_roots":
		m, field, ms := managedRootBound(managed)
		if p == "policy.script_inspection_roots" {
			// An empty managed list means the workspace roots.
			if l := managed.vals.Policy.ScriptInspectionRoots; len(l) > 0 {
				m, field, ms = l, p, managed.source(p)
			}
		}
		if len(m) == 0 {
			return nil
		}
		real := ResolveEach(m)
		what := "the managed list " + quoteList(m)
		if field != "policy.workspace_roots" && field != p {
			what = "the managed " + field + " " + showValue(m[0])
		}
		var errs []error
		for i, u := range uv.([]string) {
			if !path.IsAbs(u) {
				continue // validation reports it
			}
			ru := Resolve(u)
			if !slices.ContainsFunc(real, func(root string) bool { return sandbox.Within(ru, root) }) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%s is outside %s (%s); use one of those directories or one inside them", showPath(u), what, ms))
			}
		}
		return errs
	case "exec.env.agent_settable":
		m := mv.([]string)
		allowed := "use names from that list"
		if len(m) == 0 {
			allowed = "the managed file allows none"
		}
		var errs []error
		for i, u := range uv.([]string) {
			if !slices.Contains(m, u) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%q is not in the managed list %s (%s); %s", u, quoteList(m), ms, allowed))
			}
		}
		return errs
	case "exec.sandbox.deny_read", "exec.sandbox.write_deny", "exec.egress.denied_cidrs", "policy.egress_denylist":
		return nil // unioned: the user can only add
	default:
		r, ok := numberRules[p]
		if !ok {
			panic("policy: no narrowing rule for " + p) // a new field needs a case here
		}
		u, m := toInt64(uv), toInt64(mv)
		if u > m {
			return widens("use a value from %s to %s", r.format(min(r.min, m)), r.format(m))
		}
	}
	return nil
}

// managedSandboxField returns the first of the managed sandbox settings
// the managed file sets (the bubblewrap binary is what they are about),
// or "".
func managedSandboxField(managed *layer) string {
	for _, f := range []string{"exec.sandbox.backend", "exec.sandbox.seccomp", "policy.sandbox_required"} {
		if managed.has(f) {
			return f
		}
	}
	return ""
}

// rankNarrow checks an enumerated value against its scale, whose order is
// the strictness. The user value must rank at least as high as the managed
// one, and two different values of the same rank (bubblewrap and seatbelt)
// are not narrower than each other, so a managed concrete backend is
// locked.
func rankNarrow(p, u, m string, us, ms Source, sc scale.Scale) []error {
	ur, uok := sc.Rank(u)
	mr, mok := sc.Rank(m)
	if !uok || !mok {
		return nil // validation reports the unknown value
	}
	switch {
	case ur == mr && u != m: // bubblewrap and seatbelt: neither narrows the other
		return []error{errAt(us, p, "%q differs from the managed value %q (%s); only %s is allowed", u, m, ms, m)}
	case ur < mr:
		var allowed []string
		for _, v := range sc.Names() {
			if r, _ := sc.Rank(v); r > mr || v == m {
				allowed = append(allowed, v)
			}
		}
		what := "use " + orList(allowed)
		if len(allowed) == 1 {
			what = "only " + allowed[0] + " is allowed"
		}
		return []error{errAt(us, p, "%q widens the managed value %q (%s); %s", u, m, ms, what)}
	}
	return nil
}

// showPath quotes the path p, with where it resolves when its symlinks
// lead elsewhere.
func showPath(p string) string {
	if r := Resolve(p); r != path.Clean(p) {
		return fmt.Sprintf("%q (resolves to %q)", p, r)
	}
	return fmt.Sprintf("%q", p)
}

// showValue formats a field value for a message: strings quoted, sizes with
// their unit, lists as quoteList does.
func showValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []string:
		return quoteList(v)
	}
	return fmt.Sprint(v)
}

// quoteList formats a list as ["a", "b"].
func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// orList formats a, b and c as "a, b or c".
func orList(list []string) string {
	if len(list) <= 1 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

func toInt64(v any) int64 {
	switch v := v.(type) {
	case int:
		return int64(v)
	case ByteSize:
		return int64(v)
	}
	panic(fmt.Sprintf("policy: %T is not a number", v))
}

// egressCovered reports whether the allowlist entry u allows nothing the
// managed list m does not, comparing what entries mean (egress.ParseEntry:
// lower case, canonical addresses, numeric ports), not their text. uPorts
// are the ports an entry of the user's without ":port" allows, mPorts
// those of a managed one: every port u allows must be allowed, for u's
// host, by some managed entry. "*" covers names only, never an IP literal
// or localhost, as the proxy matches (sandbox/egress). An entry that does
// not parse is left to validation.
func egressCovered(u string, m []string, uPorts, mPorts []int) bool {
	ue, err := egress.ParseEntry(u)
	if err != nil {
		return true
	}
	ports := uPorts
	if ue.Port != 0 {
		ports = []int{int(ue.Port)}
	}
	var managed []egress.Entry
	for _, s := range m {
		if me, err := egress.ParseEntry(s); err == nil && hostCovered(ue, me) {
			managed = append(managed, me)
		}
	}
	for _, port := range ports {
		if !slices.ContainsFunc(managed, func(me egress.Entry) bool {
			return me.Port == 0 && slices.Contains(mPorts, port) || int(me.Port) == port
		}) {
			return false
		}
	}
	return true // with no ports, u allows nothing
}

// hostCovered reports whether every host the entry u matches, the entry m
// matches too, whatever the ports.
func hostCovered(u, m egress.Entry) bool {
	switch {
	case u.IP.IsValid():
		return m.IP.IsValid() && m.IP == u.IP
	case u.Host == "localhost":
		return m.Host == "localhost"
	case m.Any():
		return true
	case u.Any():
		return false
	}
	if d, ok := m.Wildcard(); ok {
		h, _ := u.Wildcard()
		if h == "" {
			h = u.Host
		}
		return h == d || strings.HasSuffix(h, "."+d)
	}
	_, wild := u.Wildcard()
	return !wild && !m.IP.IsValid() && u.Host == m.Host
}

// managedPorts returns the ports a managed entry without ":port" allows:
// the managed exec.egress.allowed_ports, or the default when it sets
// none, and where that came from.
func managedPorts(managed *layer) ([]int, Source) {
	const p = "exec.egress.allowed_ports"
	if managed.has(p) {
		return managed.vals.Exec.Egress.AllowedPorts, managed.source(p)
	}
	return defaultPorts(), Source{}
}

// userPorts returns the ports a user entry without ":port" will allow:
// the user's exec.egress.allowed_ports when it narrows the managed ones,
// else the managed ones.
func userPorts(user, managed *layer) []int {
	const p = "exec.egress.allowed_ports"
	m, _ := managedPorts(managed)
	if u := user.vals.Exec.Egress.AllowedPorts; user.has(p) &&
		!slices.ContainsFunc(u, func(port int) bool { return !slices.Contains(m, port) }) {
		return u
	}
	return m
}

// defaultPorts are the embedded defaults' exec.egress.allowed_ports.
func defaultPorts() []int {
	def, errs := embeddedLayer()
	if len(errs) > 0 {
		return egress.DefaultPorts
	}
	return def.vals.Exec.Egress.AllowedPorts
}
