package policy

// This file holds the map-valued fields of credential brokering and output
// redaction, which decode, validate and narrow themselves:
//
//	exec.credentials.env      NAME → "${credential:ID}" or a mapping (credmap.go)
//	exec.credentials.files    FILE → "${credential:ID}" or a mapping
//	policy.credential_grants  ID → [agent, ...]
//	policy.dlp_patterns       NAME → regular expression
//
// A managed file's entries bind the user file: every managed mapping,
// grant and pattern must be kept, a grant only narrowed (a subset of its
// agents); the user file may add entries of its own.

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/dlp"
)

// Credentials maps credentials from the OS keychain into commands.
type Credentials struct {
	// Env maps a variable name to a credential.
	Env CredentialEnv `yaml:"env" json:"env"`
	// Files maps a file name under $GATEHOUSE_CRED_DIR to a credential.
	Files CredentialFiles `yaml:"files" json:"files"`
}

// CredentialEnv maps variable names to credentials.
type CredentialEnv map[string]CredentialMapping

// CredentialFiles maps file names to credentials.
type CredentialFiles map[string]CredentialMapping

// CredentialGrants maps a credential id to the agents it may reach.
type CredentialGrants map[string][]string

// DLPPatterns maps a pattern's name to a regular expression (Go syntax)
// whose matches are redacted from output.
type DLPPatterns map[string]string

// Limits on the maps.
const (
	maxCredentialEntries = 64
	maxDLPPatterns       = 64
	maxGrantAgents       = 32
)

// credentialReservedEnv are variables the pipeline sets itself, on top of
// those no one may set (isReservedEnv).
var credentialReservedEnv = []string{
	"USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "PWD",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	// the CA bundle of an execution with masked credentials
	"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
	"NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
}

var (
	fileNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`) })
	patternNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_]{1,64}$`) })
	agentRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:@/+-]{1,128}$`) })
)

// A mapProblem is one bad entry of a map field.
type mapProblem struct {
	key, msg string
}

func (m CredentialGrants) problems() []mapProblem {
	var out []mapProblem
	for _, k := range sortedKeys(m) {
		if !broker.ValidID(k) {
			out = append(out, mapProblem{k, "not a credential id; an id is " + broker.IDRule})
		}
		agents := m[k]
		switch {
		case len(agents) == 0:
			out = append(out, mapProblem{k, "lists no agent; name the agents it is for (claude-code, cli, an MCP client's name), or remove the mapping to keep it from every agent"})
		case len(agents) > maxGrantAgents:
			out = append(out, mapProblem{k, fmt.Sprintf("%d agents is too many; want at most %d", len(agents), maxGrantAgents)})
		}
		for i, a := range agents {
			switch {
			case !agentRE().MatchString(a):
				out = append(out, mapProblem{fmt.Sprintf("%s[%d]", k, i), fmt.Sprintf("%q is not an agent name, like claude-code, cli or an MCP client's name", a)})
			case slices.Contains(agents[:i], a):
				out = append(out, mapProblem{fmt.Sprintf("%s[%d]", k, i), fmt.Sprintf("%q is listed twice; remove one", a)})
			}
		}
	}
	return out
}

func (m DLPPatterns) problems() []mapProblem {
	var out []mapProblem
	for _, k := range sortedKeys(m) {
		if !patternNameRE().MatchString(k) {
			out = append(out, mapProblem{k, "not a pattern name; want 1 to 64 lower-case letters, digits and underscores"})
			continue
		}
		if err := dlp.CheckPattern(dlp.Pattern{Name: k, Regexp: m[k]}); err != nil {
			out = append(out, mapProblem{k, err.Error()})
		}
	}
	if len(m) > maxDLPPatterns {
		out = append(out, mapProblem{"", fmt.Sprintf("%d patterns is too many; want at most %d", len(m), maxDLPPatterns)})
	}
	return out
}

// DecodeNode decodes a mapping of pattern names to regular expressions.
func (m *DLPPatterns) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeStringMap(n, errf, "a mapping like {acme_key: \"ACME-[0-9A-F]{32}\"}", func(s map[string]string) []mapProblem { return DLPPatterns(s).problems() })
	if err == nil {
		*m = out
	}
	return err
}

// DecodeNode decodes a mapping of credential ids to lists of agents.
func (m *CredentialGrants) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeListMap(n, errf, "a mapping like {github_token: [claude-code, cli]}", "a credential id", "a list of agents like [claude-code, cli]", "an agent name",
		func(s map[string][]string) []mapProblem { return CredentialGrants(s).problems() })
	if err == nil {
		*m = out
	}
	return err
}

// decodeListMap decodes a mapping of strings (keyWhat) to lists
// (listWant) of strings (itemWhat), then reports the problems check finds, each on the
// line of its key.
func decodeListMap(n *yaml.Node, errf func(line int, format string, args ...any), want, keyWhat, listWant, itemWhat string, check func(map[string][]string) []mapProblem) (map[string][]string, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return map[string][]string{}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want %s, got %s", want, describe(n))
	}
	out := map[string][]string{}
	lines := map[string]int{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		line := v.Line
		v = resolve(v)
		key, isStr := scalarString(k)
		if !isStr {
			errf(k.Line, "want %s as key, got %s", keyWhat, describe(k))
			ok = false
			continue
		}
		if first, dup := lines[key]; dup {
			errf(k.Line, "%s: repeated key; first set on line %d", key, first)
			ok = false
			continue
		}
		lines[key] = k.Line
		if v.Kind != yaml.SequenceNode {
			errf(line, "%s: want %s, got %s", key, listWant, describe(v))
			ok = false
			continue
		}
		items := []string{}
		for _, item := range v.Content {
			item = resolve(item)
			s, isStr := scalarString(item)
			if !isStr {
				errf(item.Line, "%s: want %s, got %s", key, itemWhat, describe(item))
				ok = false
				continue
			}
			items = append(items, s)
		}
		out[key] = items
	}
	if ok {
		for _, pr := range check(out) {
			errf(lineOf(lines, pr.key, n.Line), "%s", pr.String())
			ok = false
		}
	}
	if !ok {
		return nil, errSkip
	}
	return out, nil
}

func (pr mapProblem) String() string {
	if pr.key == "" {
		return pr.msg
	}
	return pr.key + ": " + pr.msg
}

// lineOf returns the line of the key a problem is about ("ID" or
// "ID[2]"), or def.
func lineOf(lines map[string]int, key string, def int) int {
	k, _, _ := strings.Cut(key, "[")
	if l, ok := lines[k]; ok {
		return l
	}
	return def
}

// decodeMap decodes a mapping of names to values, each by value, then
// reports the problems check finds, each on the line of its key.
func decodeMap[V any](n *yaml.Node, errf func(line int, format string, args ...any), want string, value func(*yaml.Node) (V, error), check func(map[string]V) []mapProblem) (map[string]V, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return map[string]V{}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want %s, got %s", want, describe(n))
	}
	out := map[string]V{}
	lines := map[string]int{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		key, isStr := scalarString(k)
		if !isStr {
			errf(k.Line, "want a name as key, got %s", describe(k))
			ok = false
			continue
		}
		if first, dup := lines[key]; dup {
			errf(k.Line, "%s: repeated key; first set on line %d", key, first)
			ok = false
			continue
		}
		lines[key] = k.Line
		val, err := value(v)
		if err != nil {
			errf(v.Line, "%s: %v", key, err)
			ok = false
			continue
		}
		out[key] = val
	}
	if ok {
		for _, pr := range check(out) {
			errf(lineOf(lines, pr.key, n.Line), "%s", pr.String())
			ok = false
		}
	}
	if !ok {
		return nil, errSkip
	}
	return out, nil
}

// decodeStringMap decodes a mapping of strings to strings (decodeMap).
func decodeStringMap(n *yaml.Node, errf func(line int, format string, args ...any), want string, check func(map[string]string) []mapProblem) (map[string]string, error) {
	return decodeMap(n, errf, want, func(v *yaml.Node) (string, error) {
		s, ok := scalarString(v)
		if !ok {
			return "", fmt.Errorf("want a string, got %s", describe(v))
		}
		return s, nil
	}, check)
}

// String writes m as a YAML flow mapping, sorted by key.
func (m DLPPatterns) String() string { return flowMap(m) }

// String writes m as a YAML flow mapping, sorted by key.
func (m CredentialGrants) String() string { return flowListMap(m) }

// flowListMap writes m as a YAML flow mapping of flow lists, sorted by key.
func flowListMap(m map[string][]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		q := make([]string, len(m[k]))
		for i, a := range m[k] {
			q[i] = yamlString(a)
		}
		parts = append(parts, yamlString(k)+": ["+strings.Join(q, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func flowMap(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, yamlString(k)+": "+yamlString(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateMap reports each problem of a map field, for a Config built in
// code (Load reports them while decoding, with their lines).
func (v *validator) validateMap(p string, problems []mapProblem) {
	for _, pr := range problems {
		v.failf(p, "%s", pr.String())
	}
}

// narrowMap checks that the user's map keeps every entry of the managed
// one unchanged (the user may add entries).
func narrowMap(p string, u, m map[string]string, us, ms Source) []error {
	var errs []error
	for _, k := range sortedKeys(m) {
		uv, ok := u[k]
		switch {
		case !ok:
			errs = append(errs, errAt(us, p, "%s: the managed entry %s: %s (%s) is missing; keep it", k, yamlString(k), yamlString(m[k]), ms))
		case uv != m[k]:
			errs = append(errs, errAt(us, p, "%s: %s differs from the managed value %s (%s); only %s is allowed", k, yamlString(uv), yamlString(m[k]), ms, yamlString(m[k])))
		}
	}
	return errs
}

// narrowGrants checks that the user keeps every managed grant, each to a
// subset of its agents (an id without a grant would reach every agent).
func narrowGrants(p string, u, m CredentialGrants, us, ms Source) []error {
	var errs []error
	for _, id := range sortedKeys(m) {
		ua, ok := u[id]
		if !ok {
			errs = append(errs, errAt(us, p, "%s: the managed grant %s (%s) is missing, which would widen it; keep it or narrow it", id, quoteList(m[id]), ms))
			continue
		}
		for i, a := range ua {
			if !slices.Contains(m[id], a) {
				errs = append(errs, errAt(us, p, "%s[%d]: %q is not in the managed grant %s (%s); use agents from that list", id, i, a, quoteList(m[id]), ms))
			}
		}
	}
	return errs
}

// DLP returns the configured output patterns, sorted by name.
func (c *Config) DLP() []dlp.Pattern {
	var out []dlp.Pattern
	for _, k := range sortedKeys(c.Policy.DLPPatterns) {
		out = append(out, dlp.Pattern{Name: k, Regexp: c.Policy.DLPPatterns[k]})
	}
	return out
}
