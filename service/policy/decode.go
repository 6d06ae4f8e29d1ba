package policy

// This file turns one YAML file into a layer: the values it sets and the
// line of each. It enforces the file's shape: every key is a known field,
// no key is repeated, and every value has its field's type. It does not
// judge values; validate.go does.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse-dev/gatehouse/assets"
)

// YAML short tags of the core schema.
const (
	nullTag  = "!!null"
	boolTag  = "!!bool"
	intTag   = "!!int"
	strTag   = "!!str"
	mergeTag = "!!merge"
)

// A leaf is a field of Config that holds a value rather than more fields.
type leaf struct {
	path  string // dotted yaml path: "exec.limits.tmpfs_size"
	index []int  // reflect field index from Config
}

// leaves lists every leaf of Config in declaration order, the order Show
// prints them in.
var leaves = sync.OnceValue(func() []leaf { return collectLeaves(reflect.TypeFor[Config](), "", nil) })

// leafIndex maps a leaf's path to its position in leaves.
var leafIndex = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, len(leaves()))
	for i, l := range leaves() {
		m[l.path] = i
	}
	return m
})

func collectLeaves(t reflect.Type, prefix string, index []int) []leaf {
	var out []leaf
	for i := range t.NumField() {
		f := t.Field(i)
		if yamlName(f) == "-" {
			continue // not a configuration field
		}
		p := joinPath(prefix, yamlName(f))
		idx := append(append([]int(nil), index...), i)
		if isSection(f.Type) {
			out = append(out, collectLeaves(f.Type, p, idx)...)
			continue
		}
		out = append(out, leaf{path: p, index: idx})
	}
	return out
}

// isSection reports whether t is a struct of further fields (exec,
// exec.sandbox...) rather than a value.
func isSection(t reflect.Type) bool { return t.Kind() == reflect.Struct }

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// pathFields are the fields whose values are paths where "~" and "~/"
// expand to the home directory. exec.shell, exec.sandbox.bwrap_path and
// exec.sandbox.init_path are deliberately not among them: a program path should be spelled out.
var pathFields = map[string]bool{
	"exec.default_cwd":               true,
	"exec.sandbox.deny_read":         true,
	"exec.sandbox.read_allow":        true,
	"exec.sandbox.settings_file":     true,
	"exec.egress.upstream_ca_files":  true,
	"policy.workspace_roots":         true,
	"policy.script_inspection_roots": true,
	"exec.audit.export.otlp.ca_file": true,
}

// A layer is what one file (or the embedded defaults) sets.
type layer struct {
	file  string                    // as the caller named it; "" for the defaults
	vals  Config                    // the values set; other fields are zero
	set   map[string]int            // leaf path → line of its key
	items map[string][]int          // list leaf path → line of each entry
	keys  map[string]map[string]int // map leaf path → line of each key
}

func (l *layer) has(path string) bool { _, ok := l.set[path]; return ok }

// source returns where l sets path. The defaults have no lines: a value
// from them is simply "default".
func (l *layer) source(path string) Source {
	if l.file == "" {
		return Source{}
	}
	return Source{File: l.file, Line: l.set[path]}
}

// itemSource returns where l sets entry i of the list at path.
func (l *layer) itemSource(path string, i int) Source {
	if lines := l.items[path]; l.file != "" && i < len(lines) {
		return Source{File: l.file, Line: lines[i]}
	}
	return l.source(path)
}

// uncommentedDefaults is assets.DefaultConfig with each comment line emptied.
// Three lines in four of that file are comments, and the YAML scanner
// spent more time in them than in the settings (a third of a Load); the
// lines stay, so every line number is the file's. It holds no block
// scalar, where a line that starts with "#" would be text
// (TestUncommentedDefaults).
var uncommentedDefaults = sync.OnceValue(func() []byte {
	lines := bytes.SplitAfter(assets.DefaultConfig, []byte("\n"))
	out := make([]byte, 0, len(assets.DefaultConfig))
	for _, ln := range lines {
		if t := bytes.TrimLeft(ln, " \t"); bytes.HasPrefix(t, []byte("#")) {
			if bytes.HasSuffix(ln, []byte("\n")) {
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, ln...)
	}
	return out
})

// embeddedLayer is the embedded defaults parsed with no home directory,
// once, for what reads their values (embeddedDefaults, defaultPorts).
var embeddedLayer = sync.OnceValues(func() (*layer, []error) {
	return parseLayer("", uncommentedDefaults(), "")
})

// parseLayer decodes data, the contents of file, into a layer, expanding
// "~" in path fields with home. It returns every shape error it finds; the
// layer holds the fields that decoded.
func parseLayer(file string, data []byte, home string) (*layer, []error) {
	l := &layer{file: file, set: map[string]int{}, items: map[string][]int{}, keys: map[string]map[string]int{}}
	d := &decoder{l: l, home: home}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return l, nil // an empty file sets nothing
		}
		return l, []error{syntaxError(file, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.errf(extra.Line, "", "a file holds one YAML document; remove this second one")
	case !errors.Is(err, io.EOF):
		d.errs = append(d.errs, syntaxError(file, err))
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	d.section(root, reflect.ValueOf(&l.vals).Elem(), "")
	return l, d.errs
}

type decoder struct {
	l    *layer
	home string
	errs []error
}

func (d *decoder) errf(line int, field, format string, args ...any) {
	d.errs = append(d.errs, errAt(Source{File: d.l.file, Line: line}, field, format, args...))
}

// section decodes the mapping n into the struct v, whose dotted path is
// prefix ("" for the top level).
func (d *decoder) section(n *yaml.Node, v reflect.Value, prefix string) {
	line := n.Line
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return // "exec:" with nothing under it sets nothing
	}
	if n.Kind != yaml.MappingNode {
		if prefix == "" {
			d.errf(line, "", "want a mapping of sections (exec, policy) at the top level, got %s", describe(n))
		} else {
			d.errf(line, prefix, "want a mapping, got %s", describe(n))
		}
		return
	}
	t := v.Type()
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k.Line, prefix, "want a field name as key, got %s", describe(k))
			continue
		}
		p := joinPath(prefix, k.Value)
		if k.ShortTag() == mergeTag {
			d.errf(k.Line, p, "merge keys are not supported; write the fields out")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errf(k.Line, p, "repeated key; first set on line %d", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fieldByName(t, k.Value)
		if !ok {
			d.errf(k.Line, p, "unknown field; known fields are %s", strings.Join(fieldNames(t), ", "))
			continue
		}
		fv := v.FieldByIndex(f.Index)
		if isSection(f.Type) {
			d.section(val, fv, p)
			continue
		}
		d.leaf(k.Line, val, fv, p)
	}
}

func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); yamlName(f) == name && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if n := yamlName(t.Field(i)); n != "-" {
			names = append(names, n)
		}
	}
	return names
}

// leaf decodes n into the value field v at path p, whose key is on keyLine.
func (d *decoder) leaf(keyLine int, n *yaml.Node, v reflect.Value, p string) {
	line := n.Line
	n = resolve(n)
	var err error
	switch v.Interface().(type) {
	case ByteSize:
		var b ByteSize
		if b, err = decodeByteSize(n); err == nil {
			v.Set(reflect.ValueOf(b))
		}
	case bool:
		if !isScalar(n, boolTag) {
			err = fmt.Errorf("want true or false, got %s", describe(n))
		} else {
			var b bool
			if err = n.Decode(&b); err == nil {
				v.SetBool(b)
			}
		}
	case int:
		if !isScalar(n, intTag) {
			err = fmt.Errorf("want an integer, got %s", describe(n))
		} else {
			var i int
			if n.Decode(&i) != nil {
				err = fmt.Errorf("%s is too large", n.Value)
			} else {
				v.SetInt(int64(i))
			}
		}
	case string:
		if s, ok := d.str(n, p); ok {
			v.SetString(s)
		} else {
			err = fmt.Errorf("want a string, got %s", describe(n))
		}
	case []string:
		var list []string
		if list, err = d.list(n, p); err == nil {
			v.Set(reflect.ValueOf(list))
		}
	case []int:
		var list []int
		if list, err = d.intList(n, p); err == nil {
			v.Set(reflect.ValueOf(list))
		}
	default:
		// A structured field (rules, maps) decodes itself.
		if nd, ok := v.Addr().Interface().(NodeDecoder); ok {
			err = nd.DecodeNode(n, func(line int, format string, args ...any) {
				d.errf(line, p, format, args...)
			})
			break
		}
		panic("policy: no decoder for field " + p) // a new field type needs a case here
	}
	if errors.Is(err, errSkip) {
		return
	}
	if err != nil {
		d.errf(line, p, "%v", err)
		return
	}
	d.l.set[p] = keyLine
	if n.Kind == yaml.MappingNode {
		keys := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := resolve(n.Content[i]); k.Kind == yaml.ScalarNode {
				keys[k.Value] = k.Line
			}
		}
		d.l.keys[p] = keys
	}
}

// keySource returns where l sets the key of the map at path.
func (l *layer) keySource(path, key string) Source {
	if line, ok := l.keys[path][key]; ok && l.file != "" {
		return Source{File: l.file, Line: line}
	}
	return l.source(path)
}

// list decodes a list of strings. A null value is an empty list. Errors
// about one entry are recorded directly, with the entry's index and line;
// the returned error is about the value as a whole.
func (d *decoder) list(n *yaml.Node, p string) ([]string, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		d.l.items[p] = nil
		return []string{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a list of strings like [a, b], got %s", describe(n))
	}
	list := make([]string, 0, len(n.Content))
	lines := make([]int, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		line := item.Line
		item = resolve(item)
		s, isStr := d.str(item, p)
		if !isStr {
			d.errf(line, fmt.Sprintf("%s[%d]", p, i), "want a string, got %s", describe(item))
			ok = false
			continue
		}
		list = append(list, s)
		lines = append(lines, line)
	}
	if !ok {
		return nil, errSkip
	}
	d.l.items[p] = lines
	return list, nil
}

// errSkip says the error has already been recorded.
var errSkip = errors.New("skip")

// str decodes the scalar n as the string value of field p, expanded if p
// is a path field. Any non-null scalar's text is accepted. A bare ~, which
// YAML reads as null, is the home directory in a path field.
func (d *decoder) str(n *yaml.Node, p string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.ShortTag() == nullTag && !(pathFields[p] && n.Value == "~") {
		return "", false
	}
	return d.expand(p, n.Value), true
}

// expand returns s with "~" expanded and, when absolute, cleaned, if p is
// a path field; otherwise s unchanged.
func (d *decoder) expand(p, s string) string {
	if !pathFields[p] {
		return s
	}
	s = expandHome(s, d.home)
	if path.IsAbs(s) {
		s = path.Clean(s)
	}
	return s
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isScalar(n *yaml.Node, tag string) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == tag
}

// describe names what n is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == nullTag {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// A NodeDecoder is a configuration field with structure of its own (a list
// of rules, a map of credentials). DecodeNode decodes the YAML value n into
// the field; errf records an error at a line of the file, under the field's
// path, and a returned error is about the value as a whole.
type NodeDecoder interface {
	DecodeNode(n *yaml.Node, errf func(line int, format string, args ...any)) error
}

// intList decodes a list of integers. A null value is an empty list.
func (d *decoder) intList(n *yaml.Node, p string) ([]int, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag {
		return []int{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a list of integers, got %s", describe(n))
	}
	out := []int{}
	for i, item := range n.Content {
		item = resolve(item)
		var v int
		if !isScalar(item, intTag) || item.Decode(&v) != nil {
			d.errf(item.Line, fmt.Sprintf("%s[%d]", p, i), "want an integer, got %s", describe(item))
			continue
		}
		out = append(out, v)
	}
	return out, nil
}
