package broker

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// IDPattern is the form of a credential id.
const IDPattern = `[a-z0-9_]{1,64}`

var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + IDPattern + `$`) })

// ValidID reports whether id is a credential id: 1 to 64 lower-case
// letters, digits and underscores, and not "dir" (whose variable would be
// GATEHOUSE_CRED_DIR).
func ValidID(id string) bool { return idRE().MatchString(id) && id != "dir" }

// IDRule describes a valid id, for messages.
const IDRule = `1 to 64 lower-case letters, digits and underscores (not "dir")`

// EnvPrefix begins the name of the variable a referenced credential is
// passed in.
const EnvPrefix = "GATEHOUSE_CRED_"

// DirEnv is the variable naming the directory of a command's credential
// files.
const DirEnv = "GATEHOUSE_CRED_DIR"

// EnvName returns the variable an agent's reference to id becomes:
// GATEHOUSE_CRED_<ID>.
func EnvName(id string) string { return EnvPrefix + strings.ToUpper(id) }

// refRE matches a reference as written: ${credential:ID}. The id part is
// matched loosely so that a bad id is reported, not ignored.
var refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{credential:([^}\s]*)\}`) })

// envRefRE matches the variables that carry referenced credentials.
var envRefRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`GATEHOUSE_CRED_([A-Z0-9_]{1,64})\b`) })

// refStart begins every match of refRE: text without it has no reference,
// and most commands are judged without compiling either expression.
const refStart = "${credential:"

// ParseRef returns the id of s when s is exactly one reference,
// "${credential:ID}".
func ParseRef(s string) (id string, ok bool) {
	m := refRE().FindStringSubmatch(s)
	if m == nil || m[0] != s || !ValidID(m[1]) {
		return "", false
	}
	return m[1], true
}

// A RefError is a reference that names no valid id.
type RefError struct {
	Ref string // as written
}

func (e *RefError) Error() string {
	return fmt.Sprintf("%s is not a credential reference; an id is %s, as in ${credential:github_token}", e.Ref, IDRule)
}

// Rewrite replaces every ${credential:ID} in text with ${GATEHOUSE_CRED_<ID>},
// the variable the value is passed in, so that the text the analysis
// judges and the shell runs never holds a value. It returns the ids of
// every credential the rewritten text names, references and
// GATEHOUSE_CRED_ variables written directly alike, sorted. A reference
// to an invalid id is a *RefError.
func Rewrite(text string) (string, []string, error) {
	if !strings.Contains(text, refStart) {
		return text, Named(text), nil
	}
	var bad error
	out := refRE().ReplaceAllStringFunc(text, func(m string) string {
		id := refRE().FindStringSubmatch(m)[1]
		if !ValidID(id) {
			if bad == nil {
				bad = &RefError{Ref: m}
			}
			return m
		}
		return "${" + EnvName(id) + "}"
	})
	if bad != nil {
		return "", nil, bad
	}
	return out, Named(out), nil
}

// Named returns the ids of the GATEHOUSE_CRED_ variables text names,
// sorted and without duplicates. GATEHOUSE_CRED_DIR is not one.
func Named(text string) []string {
	if !strings.Contains(text, EnvPrefix) {
		return nil
	}
	var ids []string
	for _, m := range envRefRE().FindAllStringSubmatch(text, -1) {
		id := strings.ToLower(m[1])
		if m[0] == DirEnv || !ValidID(id) || slices.Contains(ids, id) {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Expand replaces every ${credential:ID} in s with the value lookup
// returns for ID. It is for the values of agent-set variables, which no
// shell expands.
func Expand(s string, lookup func(id string) string) string {
	return refRE().ReplaceAllStringFunc(s, func(m string) string {
		return lookup(refRE().FindStringSubmatch(m)[1])
	})
}

// Refs returns the ids s references as ${credential:ID}, in order of
// first appearance; a reference to an invalid id is a *RefError.
func Refs(s string) ([]string, error) {
	var ids []string
	for _, m := range refRE().FindAllStringSubmatch(s, -1) {
		if !ValidID(m[1]) {
			return nil, &RefError{Ref: m[0]}
		}
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	return ids, nil
}
