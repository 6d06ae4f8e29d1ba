package policy

// This file layers the configuration: the embedded defaults, then the
// managed file, then the user file. Each layer overrides the fields it sets,
// except that deny_read and write_deny accumulate, and a user value may
// only narrow a value the managed file set (narrow.go).

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
)

// A Source says where an effective value came from.
type Source struct {
	// File is the file as the caller named it; "" means the embedded
	// defaults.
	File string `json:"file,omitempty"`
	// Line is the 1-based line of the field's key in File; 0 for a
	// default.
	Line int `json:"line,omitempty"`
}

// IsDefault reports whether s is the embedded defaults.
func (s Source) IsDefault() bool { return s.File == "" }

// String returns "default" or "file:line".
func (s Source) String() string {
	if s.Line == 0 {
		return s.name()
	}
	return s.name() + ":" + strconv.Itoa(s.Line)
}

// name is the file as errors print it.
func (s Source) name() string {
	if s.File == "" {
		return "default"
	}
	return s.File
}

// LoadOptions says which files Load layers over the defaults. The zero
// value loads the defaults alone (with "~" unexpanded); DefaultLoadOptions
// returns the standard files.
type LoadOptions struct {
	// UserFile is the user's configuration file; "" for none. A missing
	// file is the same as an empty one unless ExplicitUser is set.
	UserFile string
	// ManagedFile is the file IT manages, which UserFile may only narrow;
	// "" for none. A missing file is the same as an empty one.
	ManagedFile string
	// Home is the home directory "~" expands to. When empty, "~" is left
	// as is and fails validation where a path must be absolute.
	Home string
	// ExplicitUser says the user named UserFile (a command-line flag), so
	// it missing is an error.
	ExplicitUser bool
	// SavedRulesFile holds the rules approvals saved (saved.go); "" for
	// none. Its rules come after the managed file's and before the user
	// file's, in the user's tier; it may hold nothing else.
	SavedRulesFile string
}

// Loaded is a loaded configuration and the provenance of every value.
// It is not modified by its methods and is safe for concurrent reads.
type Loaded struct {
	// Config is the effective configuration.
	Config Config
	// Sources maps the dotted path of every leaf field
	// ("exec.limits.tmpfs_size", "policy.workspace_roots") to where its
	// effective value was set. For deny_read and write_deny, which
	// accumulate across layers, it is the last layer that added entries.
	Sources map[string]Source
	// Files lists the files that were read, in layer order (managed, then
	// user). A missing optional file is not listed.
	Files []string

	// items holds, for each list field, the source of each entry.
	items map[string][]Source
	// keys holds, for each map field, the source of each key.
	keys map[string]map[string]Source
	// layers names the file of each layer read: managed, saved, user.
	layers map[string]string
}

// Layers a value can come from, as Layer names them.
const (
	LayerDefault = "embedded"
	LayerManaged = OriginManaged
	LayerSaved   = OriginSaved
	LayerUser    = OriginUser
)

// Layer names the layer s points into: embedded (the defaults), managed,
// saved (the rules approvals saved) or user.
func (l *Loaded) Layer(s Source) string {
	if s.IsDefault() {
		return LayerDefault
	}
	for _, name := range []string{LayerManaged, LayerSaved, LayerUser} {
		if l.layers[name] == s.File {
			return name
		}
	}
	return LayerUser
}

// Load reads the managed and user files named in opts, layers them over the
// embedded defaults and validates the result.
//
// On failure it returns a nil *Loaded and an error joining a *FieldError
// for every problem found (unknown or repeated key, wrong type, invalid
// value, user value widening a managed one), each naming file, line and
// field, in file then line order. A file that exists but cannot be read,
// or a missing ExplicitUser file, is reported on its own.
func Load(opts LoadOptions) (*Loaded, error) {
	var errs []error
	managed, err := readLayer(opts.ManagedFile, false, opts.Home, &errs)
	if err != nil {
		return nil, err
	}
	saved, err := readSaved(opts.SavedRulesFile, opts.Home, &errs)
	if err != nil {
		return nil, err
	}
	user, err := readLayer(opts.UserFile, opts.ExplicitUser, opts.Home, &errs)
	if err != nil {
		return nil, err
	}
	return build(managed, saved, user, opts.Home, errs)
}

// build layers managed, saved and user (any may be nil) over the defaults
// and validates the result. errs are the shape errors found parsing them.
func build(managed, saved, user *layer, home string, errs []error) (*Loaded, error) {
	def, derrs := parseLayer("", uncommentedDefaults(), home)
	if len(derrs) > 0 {
		return nil, fmt.Errorf("built-in defaults: %w", errors.Join(derrs...))
	}
	l := &Loaded{Sources: map[string]Source{}, items: map[string][]Source{}, keys: map[string]map[string]Source{}, layers: map[string]string{}}
	l.apply(def, nil)
	rejected := map[string]bool{}
	if managed != nil {
		l.Files = append(l.Files, managed.file)
		l.layers[LayerManaged] = managed.file
		managed.vals.Policy.Rules.markManaged()
		l.apply(managed, nil)
	}
	savedEgress, savedByAgent, savedErrs := takeSavedEgress(saved, managed)
	errs = append(errs, savedErrs...)
	if saved != nil {
		l.Files = append(l.Files, saved.file)
		l.layers[LayerSaved] = saved.file
		saved.vals.Policy.Rules.markSaved()
		narrowErrs, _ := l.apply(saved, managed)
		errs = append(errs, narrowErrs...)
	}
	if user != nil {
		l.Files = append(l.Files, user.file)
		l.layers[LayerUser] = user.file
		var narrowErrs []error
		narrowErrs, rejected = l.apply(user, managed)
		errs = append(errs, narrowErrs...)
	}

	// Validate each value where it was written, so that an invalid managed
	// value is reported even when the user file overrides it. A default is
	// checked only where it is in effect (default_cwd's "~" needs a home
	// only if no file sets it), and a user value already refused for
	// widening is not judged again.
	errs = append(errs, validate(&def.vals, def.source, def.itemSource, func(p string) bool {
		return l.Sources[p].IsDefault() || isUnion(p)
	})...)
	for _, ly := range []*layer{managed, saved, user} {
		if ly != nil {
			errs = append(errs, validate(&ly.vals, ly.source, ly.itemSource, func(p string) bool {
				return ly.has(p) && !rejected[p]
			})...)
		}
	}
	// The settings file narrows the sound values (settings.go); then the
	// workspace roots and read_allow are judged where they resolve
	// (resolve.go).
	if len(errs) == 0 {
		errs = l.applySettings(home)
	}
	if len(errs) == 0 {
		errs = append(checkRoots(l, home), checkExport(l)...)
		errs = append(errs, checkCredentialBindings(&l.Config, l.source)...)
	}
	if len(errs) > 0 {
		managedFile := ""
		if managed != nil {
			managedFile = managed.file
		}
		sortErrors(errs, managedFile)
		return nil, errors.Join(errs...)
	}
	l.Config.Managed = managedPaths(managed)
	l.Config.ManagedEgress = managedEgress(managed)
	l.Config.Policy.EgressSaved = savedEgress
	l.Config.Policy.EgressSavedByAgent = savedByAgent
	return l, nil
}

// Check loads the configuration with file as the user file, for `gatehouse
// config check FILE`: file must exist and is layered over the defaults and
// opts.ManagedFile. opts.UserFile is ignored.
func Check(file string, opts LoadOptions) (*Loaded, error) {
	opts.UserFile, opts.ExplicitUser = file, true
	return Load(opts)
}

// readLayer reads and parses file, appending its shape errors to errs. It
// returns nil for no file: file is "", or missing and not required.
func readLayer(file string, required bool, home string, errs *[]error) (*layer, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !required:
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config file %s: %w", file, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("reading config: %w", err)
	}
	l, perrs := parseLayer(file, data, home)
	*errs = append(*errs, perrs...)
	return l, nil
}

// sortErrors orders errs by file (defaults, managed, user) then line,
// keeping errors without a location first.
func sortErrors(errs []error, managedFile string) {
	rank := func(err error) (int, int) {
		var fe *FieldError
		if !errors.As(err, &fe) {
			return -1, 0
		}
		switch fe.File {
		case "default":
			return 0, fe.Line
		case managedFile:
			return 1, fe.Line
		}
		return 2, fe.Line
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		af, al := rank(a)
		bf, bl := rank(b)
		return cmp.Or(cmp.Compare(af, bf), cmp.Compare(al, bl))
	})
}

// isUnion reports whether the list field p accumulates across layers: each layer adds entries and none
// removes them.
func isUnion(p string) bool {
	return p == "exec.sandbox.deny_read" || p == "exec.sandbox.write_deny" || p == "exec.egress.denied_cidrs" ||
		p == "policy.egress_denylist"
}

// managedListHolds reports whether an empty user list leaves the managed
// list in force rather than replacing it.
func managedListHolds(p string) bool {
	return p == "policy.workspace_roots" || p == "policy.script_inspection_roots"
}

// apply layers ly over l. When managed is not nil, ly is the user file and
// each value it sets must narrow the managed one; a value that widens is
// reported, listed in rejected and not applied.
func (l *Loaded) apply(ly, managed *layer) (errs []error, rejected map[string]bool) {
	rejected = map[string]bool{}
	eff := reflect.ValueOf(&l.Config).Elem()
	vals := reflect.ValueOf(&ly.vals).Elem()
	for _, lf := range leaves() {
		p := lf.path
		if !ly.has(p) {
			continue
		}
		// The user's rules are checked against the managed file even when
		// it sets none: its default_action bounds what they may allow.
		// Per-agent egress lists are bounded by the managed global list
		// too: it is what those agents would get otherwise.
		// Workspace roots are bounded by a managed default_cwd too: with no
		// roots, it is the only one.
		managedSets := managed != nil && (managed.has(p) || p == "policy.rules" ||
			p == "policy.egress_allowlist_by_agent" && managed.has("policy.egress_allowlist") ||
			p == "policy.workspace_roots" && managed.has("exec.default_cwd") ||
			p == "exec.egress.allowed_ports" && (managed.has("policy.egress_allowlist") || managed.has("policy.egress_allowlist_by_agent")) ||
			p == "exec.sandbox.read_allow" && managed.has("exec.sandbox.read") ||
			(p == "exec.sandbox.bwrap_path" || p == "exec.sandbox.init_path") && managedSandboxField(managed) != "" ||
			managedExport(p, managed))
		if managedSets {
			if e := narrow(p, ly, managed); len(e) > 0 {
				errs = append(errs, e...)
				rejected[p] = true
				continue
			}
		}
		dst, src := eff.FieldByIndex(lf.index), vals.FieldByIndex(lf.index)
		switch {
		case p == "policy.rules":
			// Rules accumulate: managed rules first, then the user's.
			add := src.Interface().(Rules)
			dst.Set(reflect.ValueOf(dst.Interface().(Rules).merge(add)))
			if _, ok := l.Sources[p]; ok && len(add) == 0 {
				continue // an empty list adds nothing; keep the source
			}
		case isUnion(p):
			cur := append([]string{}, dst.Interface().([]string)...)
			curItems := append([]Source{}, l.items[p]...)
			add := src.Interface().([]string)
			for i, s := range add {
				if !slices.Contains(cur, s) {
					cur = append(cur, s)
					curItems = append(curItems, ly.itemSource(p, i))
				}
			}
			dst.Set(reflect.ValueOf(cur))
			l.items[p] = curItems
			if _, ok := l.Sources[p]; ok && len(add) == 0 {
				continue // an empty list adds nothing; keep the source
			}
		case p == "policy.egress_allowlist_by_agent":
			// Agents the user does not name keep the lists they have.
			dst.Set(reflect.ValueOf(mergeEgressByAgent(dst.Interface().(EgressByAgent), src.Interface().(EgressByAgent))))
		case managedListHolds(p) && managedSets && src.Len() == 0:
			continue
		default:
			dst.Set(src)
			if list, ok := src.Interface().([]string); ok {
				items := make([]Source, len(list))
				for i := range list {
					items[i] = ly.itemSource(p, i)
				}
				l.items[p] = items
			}
			if src.Kind() == reflect.Map {
				keys := map[string]Source{}
				for _, k := range src.MapKeys() {
					keys[k.String()] = ly.keySource(p, k.String())
				}
				l.keys[p] = keys
			}
		}
		l.Sources[p] = ly.source(p)
	}
	return errs, rejected
}

func (l *Loaded) source(p string) Source { return l.Sources[p] }

// KeySource returns where the key of the map field p ("exec.credentials.env")
// was set: the file and line of the key itself, or the field's source.
func (l *Loaded) KeySource(p, key string) Source {
	if s, ok := l.keys[p][key]; ok {
		return s
	}
	return l.Sources[p]
}

// itemSource returns where entry i of the list field p came from.
func (l *Loaded) itemSource(p string, i int) Source {
	if items := l.items[p]; i < len(items) {
		return items[i]
	}
	return l.Sources[p]
}

// Validate checks the effective configuration again; each error names the
// file and line its value came from. A Loaded that Load returned is valid.
func (l *Loaded) Validate() error {
	return errors.Join(validate(&l.Config, l.source, l.itemSource, func(string) bool { return true })...)
}

// leafValue returns the value of the leaf field p of c.
func leafValue(c *Config, p string) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(leaves()[leafIndex()[p]].index).Interface()
}
