package policy

// This file enforces the managed file's authority: a value it sets may be
// narrowed by the user file, never widened.
//
//	numbers (timeouts, limits)      user ≤ managed
//	exec.enabled                    managed false locks it false
//	exec.sandbox.allow_ptrace       managed false locks it false
//	policy.sandbox_required         managed true locks it true
//	exec.shell, sandbox.bwrap_path  managed value locks it
//	exec.sandbox.backend            none < auto < bubblewrap, seatbelt; a
//	                                managed concrete backend locks it
//	exec.sandbox.seccomp            off < preferred < required
//	exec.default_cwd                inside the managed directory
//	workspace_roots,                each entry inside a managed entry (when
//	script_inspection_roots         the managed list is not empty); an
//	                                empty user list keeps the managed one
//	exec.env.agent_settable         a subset of the managed list
//	deny_read, write_deny           unioned, so nothing to check
//	policy.rules                    unioned; managed rules are their own
//	                                tier; no user allow rule under a
//	                                managed default_action ask or deny
//	disabled_builtin_rules          a subset of the managed list
//	policy.dynamic_action           allow < ask < deny
//	exec.credentials.env, .files,   every managed entry kept unchanged;
//	policy.dlp_patterns             the user may add entries
//	policy.credential_grants        every managed grant kept, to a subset
//	                                of its agents; the user may add grants
//	policy.egress_allowlist         each entry covered by a managed entry
//	policy.egress_allowlist_by_agent every managed agent's list kept; each
//	                                entry covered by the managed list the
//	                                agent would otherwise get (egress.go)
//
// Fields the managed file does not set are free. Values that are invalid in
// themselves (an unknown backend, a relative path) are left to validation.

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Strictness ranks; a higher rank is narrower.
var (
	backendRank = map[string]int{"none": 0, "auto": 1, "bubblewrap": 2, "seatbelt": 2}
	seccompRank = map[string]int{"off": 0, "preferred": 1, "required": 2}
	routingRank = map[string]int{"framework": 0, "governed_shell": 1}
	modeRank    = map[string]int{"off": 0, "enforce": 1}
	actionRank  = map[string]int{"allow": 0, "ask": 1, "deny": 2}
)

// narrow checks that the value user sets for the leaf field p narrows the
// value managed sets for it, and returns an error for each way it widens it.
func narrow(p string, user, managed *layer) []error {
	uv, mv := leafValue(&user.vals, p), leafValue(&managed.vals, p)
	us, ms := user.source(p), managed.source(p)
	widens := func(allowed string, args ...any) []error {
		return []error{errAt(us, p, "%s widens the managed value %s (%s); %s",
			showValue(uv), showValue(mv), ms, fmt.Sprintf(allowed, args...))}
	}
	switch p {
	case "policy.builtin_exec_routing":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, routingRank, []string{"framework", "governed_shell"})
	case "policy.command_analysis_mode":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, modeRank, []string{"off", "enforce"})
	case "policy.default_action", "policy.dynamic_action":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, actionRank, []string{"allow", "ask", "deny"})
	case "policy.rules":
		return narrowRules(p, user, managed)
	case "policy.disabled_builtin_rules":
		return narrowDisabledBuiltins(p, user, managed)
	case "exec.credentials.env":
		return narrowMap(p, uv.(CredentialEnv), mv.(CredentialEnv), us, ms)
	case "exec.credentials.files":
		return narrowMap(p, uv.(CredentialFiles), mv.(CredentialFiles), us, ms)
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
		m := mv.([]int)
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
		var errs []error
		for i, u := range uv.([]string) {
			if !egressCovered(u, m) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%q is not allowed by the managed list %s (%s); use entries that list covers", u, quoteList(m), ms))
			}
		}
		return errs
	case "exec.enabled", "exec.sandbox.allow_ptrace":
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
	case "exec.shell", "exec.sandbox.bwrap_path":
		if uv != mv {
			return []error{errAt(us, p, "%q differs from the managed value %q (%s); only %q is allowed", uv, mv, ms, mv)}
		}
	case "exec.sandbox.backend":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, backendRank, []string{"none", "auto", "bubblewrap", "seatbelt"})
	case "exec.sandbox.seccomp":
		return rankNarrow(p, uv.(string), mv.(string), us, ms, seccompRank, []string{"off", "preferred", "required"})
	case "exec.default_cwd":
		u, m := uv.(string), mv.(string)
		if path.IsAbs(u) && !within(u, m) {
			return []error{errAt(us, p, "%q is outside the managed value %q (%s); use that directory or one inside it", u, m, ms)}
		}
	case "policy.workspace_roots", "policy.script_inspection_roots":
		m := mv.([]string)
		if len(m) == 0 {
			return nil
		}
		var errs []error
		for i, u := range uv.([]string) {
			if path.IsAbs(u) && !slices.ContainsFunc(m, func(root string) bool { return within(u, root) }) {
				errs = append(errs, errAt(user.itemSource(p, i), fmt.Sprintf("%s[%d]", p, i),
					"%q is outside the managed list %s (%s); use one of those directories or one inside them", u, quoteList(m), ms))
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
	case "exec.sandbox.deny_read", "exec.sandbox.write_deny", "exec.egress.denied_cidrs":
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

// rankNarrow checks an enumerated value against a strictness ranking. The
// user value must rank at least as high as the managed one, and two
// different values of the same rank (bubblewrap and seatbelt) are not
// narrower than each other, so a managed concrete backend is locked.
func rankNarrow(p, u, m string, us, ms Source, rank map[string]int, order []string) []error {
	ur, uok := rank[u]
	mr, mok := rank[m]
	if !uok || !mok {
		return nil // validation reports the unknown value
	}
	switch {
	case ur == mr && u != m: // bubblewrap and seatbelt: neither narrows the other
		return []error{errAt(us, p, "%q differs from the managed value %q (%s); only %s is allowed", u, m, ms, m)}
	case ur < mr:
		var allowed []string
		for _, v := range order {
			if rank[v] > mr || v == m {
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

// within reports whether the clean absolute path p is dir or inside it.
// "/app_backup" is not within "/app".
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
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

// egressCovered reports whether the allowlist entry u (host or host:port)
// allows nothing the managed list m does not: it is in m, m has "*", or a
// managed "*.example.com" covers its host. A port on u narrows; a port on
// the managed entry must match.
func egressCovered(u string, m []string) bool {
	uh, up := splitHostPort(u)
	for _, e := range m {
		eh, ep := splitHostPort(e)
		if ep != "" && ep != up {
			continue
		}
		switch {
		case eh == "*":
			return true
		case eh == uh:
			return true
		case strings.HasPrefix(eh, "*.") && !strings.HasPrefix(uh, "*") &&
			(uh == eh[2:] || strings.HasSuffix(uh, eh[1:])):
			return true
		case strings.HasPrefix(eh, "*.") && strings.HasPrefix(uh, "*.") && strings.HasSuffix(uh, eh[1:]):
			return true
		}
	}
	return false
}

// splitHostPort splits "host:port" (or "[v6]:port"); a bare host has no
// port.
func splitHostPort(s string) (host, port string) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 0 {
			host, rest := s[1:i], s[i+1:]
			return host, strings.TrimPrefix(rest, ":")
		}
		return s, ""
	}
	if strings.Count(s, ":") == 1 {
		h, p, _ := strings.Cut(s, ":")
		return h, p
	}
	return s, ""
}
