package policy

// This file holds one entry of exec.credentials.env and .files, which is
// written in one of two forms:
//
//	GITHUB_TOKEN: "${credential:github_token}"           auto: by the value's shape
//	GITHUB_TOKEN: {credential: github_token, hosts: [api.github.com, github.com], mode: mask}
//
// The mapping form binds the credential to hosts, written like egress
// allowlist entries (an optional :port), or says what kind of secret a
// file holds (kind: ssh_key: a private key the sandbox's ssh and git use,
// docs/credentials.md "SSH keys"). With hosts the mode defaults to
// mask: the command gets a placeholder and the egress proxy puts the real
// value on the wire for those hosts only. mode: inject hands the command
// the value itself.
//
// Without hosts and without a mode (the plain form, or a mapping naming
// only the credential) the mode is auto: the value's shape, read from the
// keychain at each execution, decides (broker.ShapeOf). A value of a known
// service's format is masked and bound to that service's hosts; any other
// is injected. The configuration cannot know the value, so config show
// says what each shape would do, doctor reads the keychain and says what
// it does now, and the execution card says what it did.
//
// Checks across fields, made on the effective configuration once every
// value is sound in itself (checkCredentialBindings):
//
//   - every host of a mapping is allowed by an egress allowlist
//     (policy.egress_allowlist or one of policy.egress_allowlist_by_agent),
//     its ports included: the proxy only swaps on a connection it allows.
//     The hosts mode auto chooses are not checked at load: the
//     configuration loads, and doctor and the card say the credential is
//     unusable until they are allowed;
//   - under policy.credential_mode: mask, no mapping is injected (mode
//     auto is decided at execution: a value it would inject is denied
//     then).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/internal/scale"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/service/broker"
)

// Credential modes: how a mapped credential reaches a command.
const (
	// ModeInject gives the command the value.
	ModeInject = "inject"
	// ModeMask gives the command a placeholder; the egress proxy swaps in
	// the value on the way to the credential's hosts.
	ModeMask = "mask"
	// ModeAuto masks or injects by the value's shape, at each execution
	// (broker.ShapeOf): the mode of a mapping with no hosts and no mode.
	ModeAuto = "auto"
)

// KindSSHKey is the kind of an exec.credentials.files entry that holds an
// SSH private key: the file is written ending in a newline (OpenSSH
// refuses a key without one), and the sandbox's ssh configuration names
// it as an IdentityFile (docs/credentials.md, "SSH keys"). It is
// injected: ssh reads it inside the command.
const KindSSHKey = "ssh_key"

// credentialModes are the accepted values of policy.credential_mode:
// any lets each mapping choose; mask refuses injected mappings.
var credentialModes = scale.Of(scale.Step{"any"}, scale.Step{ModeMask})

// maxCredentialHosts bounds one mapping's hosts.
const maxCredentialHosts = 32

// A CredentialMapping is one entry of exec.credentials.env or .files.
type CredentialMapping struct {
	// Ref is the plain form as written, "${credential:ID}"; "" for the
	// mapping form.
	Ref string
	// Credential is the id, in the mapping form.
	Credential string
	// Hosts are the destinations the credential is for, written as egress
	// allowlist entries; mapping form only.
	Hosts []string
	// Mode is mask, inject or auto as written; "" means mask with hosts,
	// auto without (inject for an ssh_key).
	Mode string
	// Kind is "" or KindSSHKey (exec.credentials.files only).
	Kind string
}

// Inject returns the plain form of a mapping, "${credential:ID}", whose
// mode is auto: injected unless the value has a known service's shape.
func Inject(id string) CredentialMapping {
	return CredentialMapping{Ref: "${credential:" + id + "}"}
}

// InjectAlways returns a mapping that injects the value whatever its
// shape: {credential: ID, mode: inject}.
func InjectAlways(id string) CredentialMapping {
	return CredentialMapping{Credential: id, Mode: ModeInject}
}

// ID returns the credential id the mapping names, or "" when it names
// none validly.
func (m CredentialMapping) ID() string {
	if m.Ref != "" {
		id, _ := broker.ParseRef(m.Ref)
		return id
	}
	if broker.ValidID(m.Credential) {
		return m.Credential
	}
	return ""
}

// EffectiveMode returns how the credential reaches a command: mask,
// inject, or auto (decided by the value's shape at each execution).
func (m CredentialMapping) EffectiveMode() string {
	switch {
	case m.Ref != "":
		return ModeAuto
	case m.Mode != "":
		return m.Mode
	case m.Kind == KindSSHKey:
		return ModeInject
	case len(m.Hosts) > 0:
		return ModeMask
	}
	return ModeAuto
}

// String writes m as YAML: the reference as written, or a flow mapping
// with its mode made explicit.
func (m CredentialMapping) String() string {
	if m.plain() {
		return yamlString(m.Ref)
	}
	parts := []string{"credential: " + yamlString(m.Credential)}
	if len(m.Hosts) > 0 {
		parts = append(parts, "hosts: "+formatValue(m.Hosts))
	}
	if m.Kind != "" {
		parts = append(parts, "kind: "+yamlString(m.Kind))
	}
	parts = append(parts, "mode: "+m.EffectiveMode())
	return "{" + strings.Join(parts, ", ") + "}"
}

// plain reports whether m is the plain form ("${credential:ID}", or
// nothing at all).
func (m CredentialMapping) plain() bool {
	return m.Ref != "" || m.Credential == "" && len(m.Hosts) == 0 && m.Mode == "" && m.Kind == ""
}

// MarshalJSON writes the plain form as a string and the mapping form as
// an object, with its mode made explicit.
func (m CredentialMapping) MarshalJSON() ([]byte, error) {
	if m.Ref != "" {
		return json.Marshal(m.Ref)
	}
	return json.Marshal(struct {
		Credential string   `json:"credential"`
		Hosts      []string `json:"hosts,omitempty"`
		Kind       string   `json:"kind,omitempty"`
		Mode       string   `json:"mode"`
	}{m.Credential, m.Hosts, m.Kind, m.EffectiveMode()})
}

// MarshalYAML writes the plain form as a string and the mapping form as
// a mapping, with its mode made explicit.
func (m CredentialMapping) MarshalYAML() (any, error) {
	if m.Ref != "" {
		return m.Ref, nil
	}
	return struct {
		Credential string   `yaml:"credential"`
		Hosts      []string `yaml:"hosts,omitempty"`
		Kind       string   `yaml:"kind,omitempty"`
		Mode       string   `yaml:"mode"`
	}{m.Credential, m.Hosts, m.Kind, m.EffectiveMode()}, nil
}

// problems returns what is wrong with m on its own, each message
// starting with what it is about.
func (m CredentialMapping) problems() []string {
	if m.plain() {
		if _, ok := broker.ParseRef(m.Ref); ok {
			return nil
		}
		return []string{fmt.Sprintf("%q is not a credential reference; want \"${credential:ID}\", where an id is %s, or a mapping like {credential: github_token, hosts: [api.github.com]}", m.Ref, broker.IDRule)}
	}
	var out []string
	if !broker.ValidID(m.Credential) {
		out = append(out, fmt.Sprintf("credential: %q is not a credential id; an id is %s", m.Credential, broker.IDRule))
	}
	if len(m.Hosts) > maxCredentialHosts {
		out = append(out, fmt.Sprintf("hosts: %d entries is too many; want at most %d", len(m.Hosts), maxCredentialHosts))
	}
	for i, h := range m.Hosts {
		e, err := egress.ParseEntry(h)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("hosts[%d]: %q %v", i, h, err))
		case e.Any():
			out = append(out, fmt.Sprintf("hosts[%d]: %q would bind the credential to every host; name the hosts it is for, like api.github.com", i, h))
		case slices.Contains(m.Hosts[:i], h):
			out = append(out, fmt.Sprintf("hosts[%d]: %q is listed twice; remove one", i, h))
		}
	}
	switch {
	case m.Mode != "" && m.Mode != ModeMask && m.Mode != ModeInject && m.Mode != ModeAuto:
		out = append(out, fmt.Sprintf("mode: %q is not one of mask, inject, auto", m.Mode))
	case m.Mode == ModeMask && len(m.Hosts) == 0:
		out = append(out, "mode: mask needs hosts: the value is only put on the wire to them; list them in hosts")
	case m.Mode == ModeAuto && len(m.Hosts) > 0:
		out = append(out, "mode: auto chooses the hosts by the value's shape; with hosts listed, write mode: mask (or leave mode out)")
	}
	switch {
	case m.Kind != "" && m.Kind != KindSSHKey:
		out = append(out, fmt.Sprintf("kind: %q is not a kind of credential file; want ssh_key", m.Kind))
	case m.Kind == KindSSHKey && len(m.Hosts) > 0:
		out = append(out, "hosts: an ssh_key is used by ssh inside the command and never sent as a request header, so it cannot be masked; remove hosts (the egress allowlist says where ssh may connect)")
	case m.Kind == KindSSHKey && m.Mode != "" && m.Mode != ModeInject:
		out = append(out, fmt.Sprintf("mode: an ssh_key is injected (ssh reads the file), not %s; remove mode", m.Mode))
	}
	return out
}

// credMapProblems checks the entries of a credential map; keyProblem
// says what is wrong with a key, or "". Only files (exec.credentials.files)
// may have a kind.
func credMapProblems(m map[string]CredentialMapping, keyProblem func(string) string, files bool) []mapProblem {
	var out []mapProblem
	for _, k := range sortedKeys(m) {
		if msg := keyProblem(k); msg != "" {
			out = append(out, mapProblem{k, msg})
		}
		if m[k].Kind != "" && !files {
			out = append(out, mapProblem{k, fmt.Sprintf("kind: %s is for exec.credentials.files entries (ssh reads a key from a file); map it there", yamlString(m[k].Kind))})
		}
		for _, msg := range m[k].problems() {
			out = append(out, mapProblem{k, msg})
		}
	}
	if len(m) > maxCredentialEntries {
		out = append(out, mapProblem{"", fmt.Sprintf("%d entries is too many; want at most %d", len(m), maxCredentialEntries)})
	}
	return out
}

func envKeyProblem(k string) string {
	switch {
	case !envName().MatchString(k):
		return "not an environment variable name; want letters, digits and _, not starting with a digit"
	case isReservedEnv(k) || slices.Contains(credentialReservedEnv, strings.ToUpper(k)):
		return "is reserved: Gatehouse sets it, or it changes how the shell starts or programs load"
	}
	return ""
}

func fileKeyProblem(k string) string {
	if !fileNameRE().MatchString(k) || k == "." || k == ".." {
		return "not a plain file name; want letters, digits, '.', '_' and '-' (no '/'), like gcloud.json"
	}
	return ""
}

func (m CredentialEnv) problems() []mapProblem   { return credMapProblems(m, envKeyProblem, false) }
func (m CredentialFiles) problems() []mapProblem { return credMapProblems(m, fileKeyProblem, true) }

// DecodeNode decodes a mapping of variable names to credentials.
func (m *CredentialEnv) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeCredMap(n, errf, `a mapping like {GITHUB_TOKEN: {credential: github_token, hosts: [api.github.com]}}`, envKeyProblem, false)
	if err == nil {
		*m = out
	}
	return err
}

// DecodeNode decodes a mapping of file names to credentials.
func (m *CredentialFiles) DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error {
	out, err := decodeCredMap(n, errf, `a mapping like {gcloud.json: "${credential:gcp_sa}"}`, fileKeyProblem, true)
	if err == nil {
		*m = out
	}
	return err
}

// String writes m as a YAML flow mapping, sorted by key.
func (m CredentialEnv) String() string { return flowCredMap(m) }

// String writes m as a YAML flow mapping, sorted by key.
func (m CredentialFiles) String() string { return flowCredMap(m) }

func flowCredMap(m map[string]CredentialMapping) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, yamlString(k)+": "+m[k].String())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// decodeCredMap decodes a mapping of names to credential mappings
// (decodeMap), then reports the problems of each entry on the line of its
// key.
func decodeCredMap(n *yaml.Node, errf func(line int, format string, args ...any), want string, keyProblem func(string) string, files bool) (map[string]CredentialMapping, error) {
	return decodeMap(n, errf, want, decodeCredMapping, func(m map[string]CredentialMapping) []mapProblem { return credMapProblems(m, keyProblem, files) })
}

// decodeCredMapping decodes one value: a reference string or a mapping.
func decodeCredMapping(v *yaml.Node) (CredentialMapping, error) {
	if s, ok := scalarString(v); ok {
		return CredentialMapping{Ref: s}, nil
	}
	if v.Kind != yaml.MappingNode {
		return CredentialMapping{}, fmt.Errorf(`want "${credential:ID}" or a mapping like {credential: ID, hosts: [api.example.com]}, got %s`, describe(v))
	}
	var cm CredentialMapping
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := resolve(v.Content[i]), resolve(v.Content[i+1])
		if seen[k.Value] {
			return cm, fmt.Errorf("%s: repeated key", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "credential", "mode", "kind":
			s, ok := scalarString(val)
			if !ok {
				return cm, fmt.Errorf("%s: want a string, got %s", k.Value, describe(val))
			}
			switch k.Value {
			case "credential":
				cm.Credential = s
			case "mode":
				cm.Mode = s
			default:
				cm.Kind = s
			}
		case "hosts":
			hosts, err := stringOrList(val)
			if err != nil {
				return cm, fmt.Errorf("hosts: %v", err)
			}
			cm.Hosts = hosts
		default:
			return cm, fmt.Errorf("%s: unknown key; want credential, hosts, mode or kind", k.Value)
		}
	}
	if !seen["credential"] {
		return cm, errors.New("credential: missing; name the credential id, as in {credential: github_token, hosts: [api.github.com]}")
	}
	return cm, nil
}

// narrowCredMap checks that the user's map keeps every entry of the
// managed one, meaning the same (the user may add entries).
func narrowCredMap(p string, u, m map[string]CredentialMapping, us, ms Source) []error {
	var errs []error
	for _, k := range sortedKeys(m) {
		uv, ok := u[k]
		switch {
		case !ok:
			errs = append(errs, errAt(us, p, "%s: the managed entry %s: %s (%s) is missing; keep it", k, yamlString(k), m[k], ms))
		case uv.String() != m[k].String():
			errs = append(errs, errAt(us, p, "%s: %s differs from the managed value %s (%s); only %s is allowed", k, uv, m[k], ms, m[k]))
		}
	}
	return errs
}

// checkCredentialBindings makes the checks across fields of the head of
// this file on the effective configuration c; src says where a field was
// set.
func checkCredentialBindings(c *Config, src func(p string) Source) []error {
	var errs []error
	ports := c.Exec.Egress.AllowedPorts
	lists := [][]string{c.Policy.EgressAllowlist}
	for _, a := range sortedKeys(c.Policy.EgressAllowlistByAgent) {
		lists = append(lists, c.Policy.EgressAllowlistByAgent[a])
	}
	mask := c.Policy.CredentialMode == ModeMask
	modes := map[string]struct{ mode, where string }{}
	for _, f := range []struct {
		p string
		m map[string]CredentialMapping
	}{{"exec.credentials.env", c.Exec.Credentials.Env}, {"exec.credentials.files", c.Exec.Credentials.Files}} {
		for _, k := range sortedKeys(f.m) {
			cm := f.m[k]
			at := src(f.p)
			for i, h := range cm.Hosts {
				if !slices.ContainsFunc(lists, func(l []string) bool { return egressCovered(h, l, ports, ports) }) {
					errs = append(errs, errAt(at, f.p, "%s: hosts[%d]: %q is not allowed by policy.egress_allowlist %s; a credential's hosts must be egress destinations too: add it there",
						k, i, h, quoteList(c.Policy.EgressAllowlist)))
				}
			}
			if id := cm.ID(); id != "" {
				if prev, ok := modes[id]; ok && prev.mode != cm.EffectiveMode() {
					errs = append(errs, errAt(at, f.p, "%s: credential %q is %s here but %s by %s; a credential has one mode, give both the same",
						k, id, modeWord(cm.EffectiveMode()), modeWord(prev.mode), prev.where))
				} else if !ok {
					modes[id] = struct{ mode, where string }{cm.EffectiveMode(), f.p + "." + k}
				}
			}
			if mask && cm.EffectiveMode() == ModeInject {
				// Mode auto is decided at execution: a value it would
				// inject is denied credential_mask_required then.
				ps := src("policy.credential_mode")
				errs = append(errs, errAt(at, f.p, "%s: %s injects the value, but policy.credential_mode is mask (%s); bind it to its hosts, as in {credential: %s, hosts: [api.example.com]}",
					k, cm, ps, cmpOr(cm.ID(), "ID")))
			}
		}
	}
	return errs
}

func modeWord(mode string) string {
	switch mode {
	case ModeMask:
		return "masked"
	case ModeAuto:
		return "auto (masked or injected by its value's shape)"
	}
	return "injected"
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CredentialConfig returns the credential configuration as the broker
// takes it: references resolved to ids, the masked mappings' hosts, and
// the credentials of mode auto.
func (c *Config) CredentialConfig() *broker.Config {
	bc := &broker.Config{Env: map[string]string{}, Files: map[string]string{}, Grants: map[string][]string{}}
	add := func(field string, dst map[string]string, m map[string]CredentialMapping) {
		for _, k := range sortedKeys(m) {
			v := m[k]
			id := v.ID()
			if id == "" {
				continue
			}
			dst[k] = id
			if v.EffectiveMode() == ModeAuto {
				if bc.Auto == nil {
					bc.Auto = map[string]string{}
				}
				if _, ok := bc.Auto[id]; !ok {
					bc.Auto[id] = field + "." + k
				}
			}
			if v.EffectiveMode() != ModeMask {
				continue
			}
			if bc.Masked == nil {
				bc.Masked = map[string][]string{}
			}
			for _, h := range v.Hosts {
				if !slices.Contains(bc.Masked[id], h) {
					bc.Masked[id] = append(bc.Masked[id], h)
				}
			}
		}
	}
	add("exec.credentials.env", bc.Env, c.Exec.Credentials.Env)
	add("exec.credentials.files", bc.Files, c.Exec.Credentials.Files)
	for _, k := range sortedKeys(c.Exec.Credentials.Files) {
		if c.Exec.Credentials.Files[k].Kind == KindSSHKey && c.Exec.Credentials.Files[k].ID() != "" {
			bc.SSHKeys = append(bc.SSHKeys, k)
		}
	}
	for _, hosts := range bc.Masked {
		slices.Sort(hosts)
	}
	for k, v := range c.Policy.CredentialGrants {
		bc.Grants[k] = append([]string{}, v...)
	}
	bc.RequireMask = c.Policy.CredentialMode == ModeMask
	return bc
}

// HostsNotAllowed returns those of a credential's hosts (written as
// allowlist entries) that agent's egress allowlist does not allow on
// HTTPS's port (or the host's own port); for agent "", those that no
// allowlist allows, the global one or an agent's. The placeholder of a
// masked credential reaches none of them.
func (c *Config) HostsNotAllowed(hosts []string, agent string) []string {
	var lists [][]string
	if agent != "" {
		l, _ := c.Policy.EgressAllowlistFor(agent)
		lists = append(lists, l)
	} else {
		lists = append(lists, c.Policy.EgressAllowlist)
		for _, a := range sortedKeys(c.Policy.EgressAllowlistByAgent) {
			lists = append(lists, c.Policy.EgressAllowlistByAgent[a])
		}
	}
	var out []string
	for _, h := range hosts {
		if !slices.ContainsFunc(lists, func(l []string) bool { return egressCovered(h, l, []int{443}, c.Exec.Egress.AllowedPorts) }) {
			out = append(out, h)
		}
	}
	return out
}

// A MappingMode is how one mapping of exec.credentials reaches commands,
// as config show and doctor report it.
type MappingMode struct {
	// Field is the mapping: "exec.credentials.env.GITHUB_TOKEN".
	Field string `json:"field"`
	ID    string `json:"credential"`
	// Mode is mask, inject or auto (the value's shape decides, at each
	// execution: broker.ShapeOf).
	Mode string `json:"mode"`
	// Hosts are a masked mapping's hosts.
	Hosts []string `json:"hosts,omitempty"`
	// Kind is the file's kind (ssh_key), when it has one.
	Kind string `json:"kind,omitempty"`
	// Source is where the mapping was written.
	Source Source `json:"source"`
}

// CredentialModes returns how each mapping of exec.credentials reaches
// commands, variables first, each sorted by name.
func (l *Loaded) CredentialModes() []MappingMode {
	var out []MappingMode
	for _, f := range []struct {
		p string
		m map[string]CredentialMapping
	}{{"exec.credentials.env", l.Config.Exec.Credentials.Env}, {"exec.credentials.files", l.Config.Exec.Credentials.Files}} {
		for _, k := range sortedKeys(f.m) {
			cm := f.m[k]
			out = append(out, MappingMode{Field: f.p + "." + k, ID: cm.ID(), Mode: cm.EffectiveMode(), Hosts: cm.Hosts, Kind: cm.Kind, Source: l.KeySource(f.p, k)})
		}
	}
	return out
}

// ShowCredentials writes, as comment lines starting with prefix, how
// each mapping of exec.credentials reaches commands and where it was
// written; with a mapping of mode auto, what each shape of value does
// and whether the egress allowlist allows its hosts. The keychain is not
// read: what auto decides for a stored value is doctor's to say.
func (l *Loaded) ShowCredentials(w io.Writer, prefix string) {
	auto := false
	for _, m := range l.CredentialModes() {
		switch m.Mode {
		case ModeAuto:
			auto = true
			fmt.Fprintf(w, "%s%s: %s auto, masked or injected by its value's shape (below); 'gatehouse doctor' reads the keychain and says which; mode: inject keeps it injected  # %s\n", prefix, m.Field, m.ID, m.Source)
		case ModeMask:
			fmt.Fprintf(w, "%s%s: %s masked, bound to %s  # %s\n", prefix, m.Field, m.ID, strings.Join(m.Hosts, ", "), m.Source)
		case ModeInject:
			if m.Kind == KindSSHKey {
				fmt.Fprintf(w, "%s%s: %s injected, an SSH key: the IdentityFile of ssh and git in the sandbox  # %s\n", prefix, m.Field, m.ID, m.Source)
				continue
			}
			fallthrough
		default:
			fmt.Fprintf(w, "%s%s: %s injected  # %s\n", prefix, m.Field, m.ID, m.Source)
		}
	}
	if !auto {
		return
	}
	fmt.Fprintf(w, "%smode auto masks, bound to the service's hosts:\n", prefix)
	for _, s := range broker.Services {
		line := fmt.Sprintf("%s  %s (%s): %s", prefix, s.Name, strings.Join(s.Prefixes(), " "), strings.Join(s.Hosts, ", "))
		if no := l.Config.HostsNotAllowed(s.Hosts, ""); len(no) > 0 {
			line += fmt.Sprintf("; the egress allowlist does not allow %s: such a credential is unusable there until it does", strings.Join(no, ", "))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%s  a JWT whose aud claim is https URLs: their hosts\n", prefix)
	fmt.Fprintf(w, "%smode auto injects everything else: AWS keys (requests are signed in the command), refresh tokens, private keys, JWTs of another audience, values of no known shape\n", prefix)
}
