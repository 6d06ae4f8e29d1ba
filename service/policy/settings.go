package policy

// This file reads the sandbox-runtime settings file named by
// exec.sandbox.settings_file and applies it on top of the configuration as
// a restriction, never a widening:
//
//	filesystem.denyRead        added to exec.sandbox.deny_read
//	credentials.files[].path   added to exec.sandbox.deny_read
//	filesystem.denyWrite       kept read-only where it lies in a workspace
//	                           root (a root inside it is not writable at
//	                           all); outside the roots nothing is writable
//	filesystem.allowWrite      bounds what of the workspace roots is
//	                           writable: a root inside an entry, an entry
//	                           inside a root; an entry outside every root
//	                           is ignored, never made writable
//	network.allowedDomains     each egress allowlist keeps only what an
//	                           entry allows too; an empty list is ignored
//	network.deniedDomains      refused by the egress proxy, whatever the
//	                           allowlist says
//
// Keys that could only widen (allowRead, allowUnixSockets,
// allowAllUnixSockets, allowLocalBinding, enableWeakerNestedSandbox, an
// empty allowedDomains...) and keys that mean nothing to Gatehouse are
// ignored, each listed in Settings.Ignored, which callers show as a
// warning. Unknown keys, wrong types and entries that do not parse refuse
// the file, naming the file, the line and the JSON path.
//
// Paths: "~" and "~/" expand to the home directory; a relative path is
// taken in each workspace root (sandbox-runtime takes it in the directory
// it starts in: the project). Glob patterns are refused in the deny lists:
// a pattern Gatehouse could not enforce must not pass for one it does.
//
// A Claude Code settings file (an object with a "sandbox" key) is read for
// its "sandbox" block alone, whose allowWrite adds writable paths: every
// entry of it is ignored.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

// Formats of a settings file.
const (
	FormatSandboxRuntime = "sandbox-runtime"
	FormatClaudeCode     = "claude-code"
)

// Settings is what a settings file changed, and what of it was ignored.
// The executor applies AllowWrite, DenyWrite and DeniedDomains; the rest of
// its effect is already in the configuration's fields.
type Settings struct {
	// File is the settings file, as configured.
	File string `json:"file"`
	// Format is FormatSandboxRuntime or FormatClaudeCode.
	Format string `json:"format"`
	// BoundWrites says AllowWrite bounds what of the workspace roots is
	// writable (Writable); AllowWrite may then be empty: nothing is.
	BoundWrites bool     `json:"bound_writes"`
	AllowWrite  []string `json:"allow_write,omitempty"`
	// DenyWrite are absolute paths kept read-only: a workspace root in
	// one is not writable, a path inside a root is bound read-only.
	DenyWrite []string `json:"deny_write,omitempty"`
	// DeniedDomains are refused by the egress proxy, whatever the
	// allowlist (egress.ParseEntry syntax; "*" refuses everything).
	DeniedDomains []string `json:"denied_domains,omitempty"`
	// Changes says what the file changed, Ignored what it did not, each
	// with where in the file.
	Changes []SettingsNote `json:"changes"`
	Ignored []SettingsNote `json:"ignored"`
}

// A SettingsNote is one effect of a settings file, or one key or entry of
// it that had none.
type SettingsNote struct {
	// Path is the JSON path: "filesystem.denyRead[2]".
	Path string `json:"path"`
	Line int    `json:"line"`
	// What says what happened, or why nothing did.
	What string `json:"what"`
}

// Warnings returns one line per ignored key or entry of the settings file:
// "file:line: path: ignored: why".
func (s *Settings) Warnings() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.Ignored))
	for i, n := range s.Ignored {
		out[i] = fmt.Sprintf("%s:%d: %s: ignored: %s", s.File, n.Line, n.Path, n.What)
	}
	return out
}

// Writable returns what of the resolved workspace roots commands may
// write under s: all of them when s is nil or bounds nothing. An
// allowWrite entry inside a root takes the root's place when it exists as
// a directory; a root inside a denyWrite path is left out.
func (s *Settings) Writable(roots []string) []string {
	if s == nil {
		return roots
	}
	out := roots
	if s.BoundWrites {
		out = nil
		allow := ResolveEach(s.AllowWrite)
		for _, r := range roots {
			for _, a := range allow {
				switch {
				case sandbox.Within(r, a):
					out = append(out, r)
				case sandbox.Within(a, r):
					if fi, err := os.Stat(a); err == nil && fi.IsDir() {
						out = append(out, a)
					}
				}
			}
		}
	}
	deny := ResolveEach(s.DenyWrite)
	var kept []string
	for _, w := range out {
		if slices.Contains(kept, w) || slices.ContainsFunc(deny, func(d string) bool { return sandbox.Within(w, d) }) {
			continue
		}
		kept = append(kept, w)
	}
	// A directory inside another kept one is writable through it.
	return slices.DeleteFunc(kept, func(w string) bool {
		return slices.ContainsFunc(kept, func(o string) bool { return o != w && sandbox.Within(w, o) })
	})
}

// applySettings reads the settings file the configuration names, if any,
// and applies it to l. Errors are *FieldErrors naming the settings file.
func (l *Loaded) applySettings(home string) []error {
	file := l.Config.Exec.Sandbox.SettingsFile
	if file == "" {
		return nil
	}
	src := l.source("exec.sandbox.settings_file")
	data, err := readSettingsFile(file)
	if err != nil {
		return []error{errAt(src, "exec.sandbox.settings_file", "%q %v; a settings file that is set must be there, or no restriction it holds would apply", file, err)}
	}
	r := &settingsReader{file: file, home: home, roots: l.Config.WorkspaceRootsEffective(),
		s: &Settings{File: file, Changes: []SettingsNote{}, Ignored: []SettingsNote{}}}
	root, err := parseJSON(file, data)
	if err != nil {
		return []error{err}
	}
	r.read(root)
	if len(r.errs) > 0 {
		return r.errs
	}
	r.apply(l)
	// A settings file in a workspace root is kept read-only there: a
	// command must not undo what it restricts by editing it.
	if abs := path.Clean(file); path.IsAbs(abs) && r.overlapsRoot(abs) && !slices.Contains(r.s.DenyWrite, abs) {
		r.s.DenyWrite = append(r.s.DenyWrite, abs)
		r.changed(0, "", "%s lies in a workspace root: kept read-only", abs)
	}
	if len(r.errs) > 0 {
		return r.errs
	}
	l.Config.Settings = r.s
	return nil
}

// maxSettingsFile bounds the size of a settings file.
const maxSettingsFile = 1 << 20

// readSettingsFile returns the contents of the regular file file, at most
// maxSettingsFile bytes; the error is a phrase that follows the file's
// name.
func readSettingsFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("does not exist")
	case err != nil:
		return nil, fmt.Errorf("cannot be read: %v", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot be read: %v", err)
	case !fi.Mode().IsRegular():
		return nil, errors.New("is not a regular file")
	case fi.Size() > maxSettingsFile:
		return nil, fmt.Errorf("is %d bytes; the limit is %d", fi.Size(), maxSettingsFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSettingsFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", err)
	}
	if len(data) > maxSettingsFile {
		return nil, fmt.Errorf("is over %d bytes", maxSettingsFile)
	}
	return data, nil
}

// settingsReader reads one settings file.
type settingsReader struct {
	file  string
	home  string
	roots []string // the workspace roots, as configured
	s     *Settings
	errs  []error

	denyRead, denyWrite, allowedDomains []entry
	allowedDomainsLine                  int
	allowedDomainsPath                  string // "" when the file sets none
}

// An entry is one list entry of the file with where it is.
type entry struct {
	value, path string
	line        int
}

func (r *settingsReader) errf(line int, p, format string, args ...any) {
	r.errs = append(r.errs, errAt(Source{File: r.file, Line: line}, p, format, args...))
}

func (r *settingsReader) changed(line int, p, format string, args ...any) {
	r.s.Changes = append(r.s.Changes, SettingsNote{Path: p, Line: line, What: fmt.Sprintf(format, args...)})
}

func (r *settingsReader) ignored(line int, p, format string, args ...any) {
	r.s.Ignored = append(r.s.Ignored, SettingsNote{Path: p, Line: line, What: fmt.Sprintf(format, args...)})
}

// A key's kind says what reading it does.
type keyKind int

const (
	keyObject keyKind = iota // a section read on its own
	keyDenyRead
	keyDenyWrite
	keyAllowWrite
	keyAllowedDomains
	keyDeniedDomains
	keyCredentials
	keyWidenTrue  // a boolean that widens when true
	keyWidenFalse // a boolean that widens when false
	keyWidenList  // a list of strings that widens when not empty
	keyWidenAny   // any value widens
	keyInert      // means nothing to Gatehouse
)

// A key is one known key of a section, and why it is ignored when it is.
type key struct {
	kind keyKind
	why  string
}

var (
	srtTop = map[string]key{
		"network":                      {kind: keyObject},
		"filesystem":                   {kind: keyObject},
		"credentials":                  {kind: keyCredentials},
		"enableWeakerNestedSandbox":    {keyWidenTrue, "it would weaken the sandbox; Gatehouse's is not weakened by a settings file"},
		"enableWeakerNetworkIsolation": {keyWidenTrue, "it would open a macOS service to commands; Gatehouse never does"},
		"allowAppleEvents":             {keyWidenTrue, "it would let commands start other applications outside the sandbox"},
		"allowPty":                     {keyWidenTrue, "it would widen the macOS profile"},
		"ignoreViolations":             {keyInert, "it only quiets sandbox-runtime's violation reports"},
		"ripgrep":                      {keyInert, "sandbox-runtime's own tool settings mean nothing to Gatehouse"},
		"mandatoryDenySearchDepth":     {keyInert, "Gatehouse looks for write-deny paths at its own depth"},
		"seccomp":                      {keyInert, "Gatehouse installs its own seccomp filter"},
		"bwrapPath":                    {keyWidenAny, "only exec.sandbox.bwrap_path chooses the bubblewrap binary"},
		"socatPath":                    {keyInert, "Gatehouse does not use socat"},
		"javaAgentJarPath":             {keyInert, "Gatehouse does not use a Java agent"},
		"windows":                      {keyInert, "Gatehouse's sandbox does not run on Windows"},
		"git":                          {keyInert, "Gatehouse does not set git configuration"},
	}
	claudeTop = map[string]key{
		"network":                      {kind: keyObject},
		"filesystem":                   {kind: keyObject},
		"enabled":                      {keyWidenFalse, "it does not turn Gatehouse's sandbox off"},
		"allowUnsandboxedCommands":     {keyWidenTrue, "every command Gatehouse runs is sandboxed"},
		"excludedCommands":             {keyWidenList, "every command Gatehouse runs is sandboxed"},
		"autoAllowBashIfSandboxed":     {keyInert, "Gatehouse's policy decides which commands run"},
		"enableWeakerNestedSandbox":    {keyWidenTrue, "it would weaken the sandbox; Gatehouse's is not weakened by a settings file"},
		"enableWeakerNetworkIsolation": {keyWidenTrue, "it would open a macOS service to commands; Gatehouse never does"},
		"ignoreViolations":             {keyInert, "it only quiets violation reports"},
	}
	srtNetwork = map[string]key{
		"allowedDomains":      {kind: keyAllowedDomains},
		"deniedDomains":       {kind: keyDeniedDomains},
		"deniedDomainReasons": {keyInert, "the proxy's refusal names the entry and this file"},
		"strictAllowlist":     {keyInert, "Gatehouse's allowlist is always strict"},
		"allowUnixSockets":    {keyWidenList, "commands never reach host unix sockets (seccomp refuses them)"},
		"allowAllUnixSockets": {keyWidenTrue, "commands never reach host unix sockets (seccomp refuses them)"},
		"allowLocalBinding":   {keyWidenTrue, "it would let commands listen on local ports outside their own network namespace"},
		"allowMachLookup":     {keyWidenList, "it would open macOS services to commands"},
		"httpProxyPort":       {keyWidenAny, "only Gatehouse's own egress proxy filters destinations"},
		"socksProxyPort":      {keyWidenAny, "only Gatehouse's own egress proxy filters destinations"},
		"mitmProxy":           {keyWidenAny, "only Gatehouse's own egress proxy carries connections"},
		"parentProxy":         {keyWidenAny, "only Gatehouse's own egress proxy carries connections"},
		"tlsTerminate":        {keyWidenAny, "Gatehouse terminates TLS only for masked credentials (exec.credentials)"},
	}
	srtFilesystem = map[string]key{
		"denyRead":                  {kind: keyDenyRead},
		"denyWrite":                 {kind: keyDenyWrite},
		"allowWrite":                {kind: keyAllowWrite},
		"allowRead":                 {keyWidenList, "it could only make a denied path readable; use exec.sandbox.read_allow"},
		"disabled":                  {keyWidenTrue, "it would turn the filesystem restrictions off"},
		"allowGitConfig":            {keyWidenTrue, ".git/config stays write-denied"},
		"allowManagedReadPathsOnly": {keyInert, "allowRead is ignored anyway"},
	}
)

// read reads the root value of the file.
func (r *settingsReader) read(root *jvalue) {
	if root.kind != jObject {
		r.errf(root.line, "", "want a JSON object, got %s", root.describe())
		return
	}
	r.s.Format = FormatSandboxRuntime
	top, prefix := srtTop, ""
	if sb := root.get("sandbox"); sb != nil {
		// A Claude Code settings file: its "sandbox" block alone.
		r.s.Format, top, prefix = FormatClaudeCode, claudeTop, "sandbox"
		if sb.kind != jObject {
			r.errf(sb.line, prefix, "want a JSON object, got %s", sb.describe())
			return
		}
		root = sb
	}
	r.section(root, prefix, top)
}

// section reads the object v at path p whose keys are known.
func (r *settingsReader) section(v *jvalue, p string, known map[string]key) {
	if v.kind != jObject {
		r.errf(v.line, p, "want a JSON object, got %s", v.describe())
		return
	}
	for i, k := range v.keys {
		kp, val, line := joinPath(p, k), v.vals[i], v.keyLines[i]
		kk, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			slices.Sort(names)
			r.errf(line, kp, "unknown key; known keys are %s", strings.Join(names, ", "))
			continue
		}
		switch kk.kind {
		case keyObject:
			switch k {
			case "network":
				r.section(val, kp, srtNetwork)
			case "filesystem":
				r.section(val, kp, srtFilesystem)
			}
		case keyDenyRead:
			r.denyRead = append(r.denyRead, r.list(val, kp)...)
		case keyDenyWrite:
			r.denyWrite = append(r.denyWrite, r.list(val, kp)...)
		case keyAllowWrite:
			r.allowWrite(val, kp)
		case keyAllowedDomains:
			list := r.list(val, kp)
			if val.kind != jArray {
				break
			}
			if len(list) == 0 {
				r.ignored(line, kp, "an empty list means every domain to sandbox-runtime; Gatehouse's allowlist stays as it is")
				break
			}
			r.allowedDomains, r.allowedDomainsLine, r.allowedDomainsPath = list, line, kp
		case keyDeniedDomains:
			for _, e := range r.list(val, kp) {
				if _, err := egress.ParseEntry(e.value); err != nil {
					r.errf(e.line, e.path, "%q %v", e.value, err)
					continue
				}
				r.s.DeniedDomains = append(r.s.DeniedDomains, e.value)
				r.changed(e.line, e.path, "%q is refused by the egress proxy, whatever the allowlist", e.value)
			}
		case keyCredentials:
			r.credentials(val, kp)
		case keyWidenTrue, keyWidenFalse:
			if val.kind != jBool {
				r.errf(val.line, kp, "want true or false, got %s", val.describe())
			} else if val.b == (kk.kind == keyWidenTrue) {
				r.ignored(line, kp, "%v: %s", val.b, kk.why)
			}
		case keyWidenList:
			if list := r.list(val, kp); len(list) > 0 {
				r.ignored(line, kp, "%s: %s", quoteEntries(list), kk.why)
			}
		case keyWidenAny:
			if val.kind != jNull {
				r.ignored(line, kp, "%s", kk.why)
			}
		case keyInert:
			r.ignored(line, kp, "%s", kk.why)
		}
	}
}

// list reads a list of strings; an entry of another type is an error.
func (r *settingsReader) list(v *jvalue, p string) []entry {
	if v.kind != jArray {
		r.errf(v.line, p, "want a list of strings, got %s", v.describe())
		return nil
	}
	out := []entry{}
	for i, it := range v.items {
		ip := fmt.Sprintf("%s[%d]", p, i)
		if it.kind != jString {
			r.errf(it.line, ip, "want a string, got %s", it.describe())
			continue
		}
		if it.str == "" {
			r.errf(it.line, ip, "is empty; want a path or a domain")
			continue
		}
		out = append(out, entry{value: it.str, path: ip, line: it.line})
	}
	return out
}

// allowWrite reads filesystem.allowWrite.
func (r *settingsReader) allowWrite(v *jvalue, p string) {
	list := r.list(v, p)
	if v.kind != jArray {
		return
	}
	if r.s.Format == FormatClaudeCode {
		// Claude Code's allowWrite adds writable paths beyond its working
		// directory: there is nothing in it to narrow by.
		for _, e := range list {
			r.ignored(e.line, e.path, "%q: Claude Code's allowWrite adds writable paths; only the workspace roots are writable", e.value)
		}
		return
	}
	r.s.BoundWrites = true
	r.s.AllowWrite = []string{}
	for _, e := range list {
		if hasGlob(e.value) {
			r.ignored(e.line, e.path, "%q: glob patterns are not matched; nothing it names is made writable", e.value)
			continue
		}
		for _, abs := range r.expand(e.value) {
			if !r.overlapsRoot(abs) {
				r.ignored(e.line, e.path, "%q is outside the workspace roots %s; it is never made writable", e.value, quoteList(r.roots))
				continue
			}
			r.s.AllowWrite = append(r.s.AllowWrite, abs)
			r.changed(e.line, e.path, "%q: of the workspace roots, only what lies in %s (and the other allowWrite entries) is writable", e.value, abs)
		}
	}
	if len(r.s.AllowWrite) == 0 {
		r.changed(v.line, p, "no entry lies in a workspace root: no workspace root is writable")
	}
}

// credentials reads the credentials block: every file it declares is
// hidden, whatever its mode (Gatehouse masks no file); environment
// variables never reach commands from the host.
func (r *settingsReader) credentials(v *jvalue, p string) {
	if v.kind != jObject {
		r.errf(v.line, p, "want a JSON object, got %s", v.describe())
		return
	}
	for i, k := range v.keys {
		kp, val, line := joinPath(p, k), v.vals[i], v.keyLines[i]
		switch k {
		case "files":
			if val.kind != jArray {
				r.errf(val.line, kp, "want a list of objects, got %s", val.describe())
				continue
			}
			for j, f := range val.items {
				fp := fmt.Sprintf("%s[%d]", kp, j)
				pv := f.get("path")
				switch {
				case f.kind != jObject:
					r.errf(f.line, fp, "want an object with a path, got %s", f.describe())
				case pv == nil:
					r.errf(f.line, fp, "has no path")
				case pv.kind != jString || pv.str == "":
					r.errf(pv.line, fp+".path", "want a path, got %s", pv.describe())
				default:
					r.denyRead = append(r.denyRead, entry{value: pv.str, path: fp + ".path", line: pv.line})
				}
			}
		case "envVars":
			r.ignored(line, kp, "commands never get the host's environment: only what Gatehouse constructs")
		default:
			r.ignored(line, kp, "Gatehouse's credentials are exec.credentials")
		}
	}
}

// expand returns the absolute paths s names: "~" expanded, a relative
// path in each workspace root.
func (r *settingsReader) expand(s string) []string {
	s = expandHome(s, r.home)
	if path.IsAbs(s) {
		return []string{path.Clean(s)}
	}
	var out []string
	for _, root := range r.roots {
		out = append(out, path.Join(root, s))
	}
	return out
}

// overlapsRoot reports whether abs lies in a workspace root or holds one.
func (r *settingsReader) overlapsRoot(abs string) bool {
	ra := Resolve(abs)
	return slices.ContainsFunc(ResolveEach(r.roots), func(root string) bool { return sandbox.Within(ra, root) || sandbox.Within(root, ra) })
}

// apply puts what was read into l.
func (r *settingsReader) apply(l *Loaded) {
	c := &l.Config
	const dr = "exec.sandbox.deny_read"
	for _, e := range r.denyRead {
		if hasGlob(e.value) {
			r.errf(e.line, e.path, "%q is a glob pattern, which Gatehouse does not match; list the paths", e.value)
			continue
		}
		for _, abs := range r.expand(e.value) {
			ra := Resolve(abs)
			if i := slices.IndexFunc(ResolveEach(r.roots), func(root string) bool { return sandbox.Within(root, ra) }); i >= 0 {
				r.errf(e.line, e.path, "%q holds the workspace root %q, which commands must read; to hide the rest of the home directory use exec.sandbox.read: workspace", e.value, r.roots[i])
				continue
			}
			if !slices.Contains(c.Exec.Sandbox.DenyRead, abs) {
				c.Exec.Sandbox.DenyRead = append(c.Exec.Sandbox.DenyRead, abs)
				l.items[dr] = append(l.items[dr], Source{File: r.file, Line: e.line})
			}
			r.changed(e.line, e.path, "%q: %s added to %s", e.value, abs, dr)
		}
	}
	for _, e := range r.denyWrite {
		if hasGlob(e.value) {
			r.errf(e.line, e.path, "%q is a glob pattern, which Gatehouse does not match; list the paths", e.value)
			continue
		}
		for _, abs := range r.expand(e.value) {
			if !r.overlapsRoot(abs) {
				r.ignored(e.line, e.path, "%q is outside the workspace roots: nothing there is writable already", e.value)
				continue
			}
			if !slices.Contains(r.s.DenyWrite, abs) {
				r.s.DenyWrite = append(r.s.DenyWrite, abs)
			}
			r.changed(e.line, e.path, "%q: %s is kept read-only", e.value, abs)
		}
	}
	if r.allowedDomainsPath != "" {
		r.narrowEgress(l)
	}
}

// narrowEgress keeps of each egress allowlist what network.allowedDomains
// allows too.
func (r *settingsReader) narrowEgress(l *Loaded) {
	var theirs []egress.Entry
	for _, e := range r.allowedDomains {
		pe, err := egress.ParseEntry(e.value)
		if err != nil {
			r.errf(e.line, e.path, "%q %v", e.value, err)
			continue
		}
		theirs = append(theirs, pe)
	}
	if len(r.errs) > 0 {
		return
	}
	const pa = "policy.egress_allowlist"
	p := r.allowedDomainsPath
	ports := l.Config.Exec.Egress.AllowedPorts
	where := Source{File: r.file, Line: r.allowedDomainsLine}
	before := l.Config.Policy.EgressAllowlist
	after := intersectEgress(before, theirs, ports)
	l.Config.Policy.EgressAllowlist = after
	l.Sources[pa] = where
	items := make([]Source, len(after))
	for i := range items {
		items[i] = where
	}
	l.items[pa] = items
	r.changed(r.allowedDomainsLine, p, "%s narrowed from %s to %s", pa, quoteList(before), quoteList(after))
	if by := l.Config.Policy.EgressAllowlistByAgent; len(by) > 0 {
		out := EgressByAgent{}
		for _, agent := range sortedKeys(by) {
			out[agent] = intersectEgress(by[agent], theirs, ports)
			r.changed(r.allowedDomainsLine, p, "policy.egress_allowlist_by_agent.%s narrowed from %s to %s", agent, quoteList(by[agent]), quoteList(out[agent]))
		}
		l.Config.Policy.EgressAllowlistByAgent = out
		l.Sources["policy.egress_allowlist_by_agent"] = where
	}
}

// intersectEgress returns the entries of ours that allow only what an
// entry of theirs allows too: for each pair, the narrower host with the
// ports both allow. ports are what an entry of ours without ":port"
// allows; an entry of theirs without one allows any port.
func intersectEgress(ours []string, theirs []egress.Entry, ports []int) []string {
	out := []string{}
	add := func(e egress.Entry) {
		if s := e.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range ours {
		o, err := egress.ParseEntry(s)
		if err != nil {
			continue // validation refused it already
		}
		for _, t := range theirs {
			var host egress.Entry
			switch {
			case hostCovered(t, o):
				host = t
			case hostCovered(o, t):
				host = o
			default:
				continue
			}
			switch {
			case o.Port != 0 && t.Port != 0 && o.Port != t.Port:
				continue
			case o.Port != 0:
				host.Port = o.Port
			case t.Port != 0:
				if !slices.Contains(ports, int(t.Port)) {
					continue
				}
				host.Port = t.Port
			default:
				host.Port = 0
			}
			add(host)
		}
	}
	return out
}

// hasGlob reports whether s is a glob pattern.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

func quoteEntries(list []entry) string {
	v := make([]string, len(list))
	for i, e := range list {
		v[i] = e.value
	}
	return quoteList(v)
}
