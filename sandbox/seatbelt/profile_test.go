package seatbelt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/profile.golden")

// representative is a plan with everything a profile names: workspace roots
// with spaces and quotes in their names, write-deny names and paths, the
// deny-read set with the credential directory inside a hidden parent, a
// pinned copy, the tool cache, the private temporary directory and the
// proxy's port.
func representative() (*sandbox.Spec, Plan) {
	spec := &sandbox.Spec{
		ID:             "0123456789abcdef",
		Shell:          "/bin/bash",
		Command:        "make test",
		Dir:            "/Users/ada/src/My Project",
		WorkspaceRoots: []string{"/Users/ada/src/My Project", `/Users/ada/src/it's "quoted" (really)`},
		WriteDeny:      []string{".git/hooks/", ".vscode/", ".envrc", "/Users/ada/src/My Project/sub/.git/config"},
		DenyRead: []string{
			"/Users/ada/.ssh", "/Users/ada/.aws", "/Users/ada/Library/Keychains",
			"/Users/ada/Library/Application Support/Gatehouse", "/Users/ada/Library/Caches/Gatehouse/cred",
		},
		CredDir:   "/Users/ada/Library/Caches/Gatehouse/cred/exec-0123",
		Pins:      []sandbox.Pin{{Path: "/Users/ada/src/My Project/build.sh", Source: "/private/var/folders/xy/T/gatehouse-pin-1/0"}},
		ToolCache: &sandbox.ToolCache{Root: "/Users/ada/Library/Caches/Gatehouse/sandbox", Dir: "/Users/ada/Library/Caches/Gatehouse/sandbox/claude-code"},
		Egress:    &sandbox.Egress{Addr: "127.0.0.1:52144"},
	}
	plan, err := PlanFor(spec, "/private/var/folders/xy/T/gatehouse-tmp-1")
	if err != nil {
		panic(err)
	}
	return spec, plan
}

// TestProfileGolden runs on every OS: generating the profile is portable.
func TestProfileGolden(t *testing.T) {
	t.Parallel()
	spec, plan := representative()
	got, err := Profile(spec, plan)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "profile.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("profile differs from %s (go test -update to accept):\n%s", golden, got)
	}
	// What the golden file must say, whatever its layout.
	tree := parse(t, got)
	for _, want := range []string{
		`(deny default)`,
		`(allow network-outbound (remote tcp "localhost:52144"))`,
		`(subpath "/Users/ada/src/it's \"quoted\" (really)")`,
		`(subpath "/Users/ada/src/My Project/.git/hooks")`,
		`(subpath "/Users/ada/src/it's \"quoted\" (really)/.envrc")`,
		`(subpath "/Users/ada/src/My Project/sub/.git/config")`,
		`(require-all (subpath "/Users/ada/Library/Caches/Gatehouse/cred") (require-not (subpath "/Users/ada/Library/Caches/Gatehouse/cred/exec-0123")))`,
		`(subpath "/private/var/folders/xy/T/gatehouse-tmp-1")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	if len(tree) < 3 || fmt.Sprint(tree[0]) != "[version 1]" || fmt.Sprint(tree[1]) != "[deny default]" {
		t.Errorf("profile does not start with (version 1) (deny default): %v", tree[:2])
	}
	// Writes are allowed in one rule only, and network in one.
	var writes, nets int
	for _, form := range tree {
		l, ok := form.([]any)
		if !ok || len(l) < 2 {
			continue
		}
		if l[0] == sym("allow") && l[1] == sym("file-write*") {
			writes++
		}
		if l[0] == sym("allow") && strings.HasPrefix(fmt.Sprint(l[1]), "network") {
			nets++
		}
	}
	if writes != 1 || nets != 1 {
		t.Errorf("got %d file-write* and %d network allow rules, want one each", writes, nets)
	}
}

func TestProfileWithoutProxy(t *testing.T) {
	t.Parallel()
	spec, _ := representative()
	spec.Egress = nil
	plan, err := PlanFor(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Profile(spec, plan)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "network") && !strings.Contains(got, "; Network: none") {
		t.Errorf("a profile without a proxy allows network:\n%s", got)
	}
	parse(t, got)
}

func TestPlanForRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"10.0.0.1:3128", "127.0.0.1:0", "localhost:3128", "proxy.sock"} {
		spec := &sandbox.Spec{Egress: &sandbox.Egress{Addr: addr}}
		if _, err := PlanFor(spec, ""); err == nil {
			t.Errorf("PlanFor accepted the proxy address %q", addr)
		}
	}
}

func TestProfileRefuses(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(*sandbox.Spec){
		"newline in a root":     func(s *sandbox.Spec) { s.WorkspaceRoots = append(s.WorkspaceRoots, "/a\n(allow default)") },
		"NUL in deny-read":      func(s *sandbox.Spec) { s.DenyRead = append(s.DenyRead, "/a\x00b") },
		"relative deny-read":    func(s *sandbox.Spec) { s.DenyRead = append(s.DenyRead, "home/.ssh") },
		"write-deny escaping":   func(s *sandbox.Spec) { s.WriteDeny = append(s.WriteDeny, "../outside") },
		"control in cred dir":   func(s *sandbox.Spec) { s.CredDir = "/c\rx" },
		"tab in the tool cache": func(s *sandbox.Spec) { s.ToolCache.Dir = "/c\tx" },
	} {
		spec, plan := representative()
		mutate(spec)
		if p, err := Profile(spec, plan); err == nil {
			t.Errorf("%s: Profile accepted it:\n%s", name, p)
		}
	}
}

// FuzzProfilePath puts one path in every place a profile names a path;
// whatever it holds, the profile either is refused or has exactly the
// structure it has for a plain path, with the path as one string wherever
// the plain one was.
func FuzzProfilePath(f *testing.F) {
	for _, s := range []string{`"`, `)`, `\`, "\n", `") (allow default) ("`, `\") (allow default`, `#"x"`, `;`, `|`, "é", `a"b)c\d`} {
		f.Add(s)
	}
	build := func(p string) (*sandbox.Spec, Plan) {
		spec := &sandbox.Spec{
			WorkspaceRoots: []string{"/ws/" + p},
			WriteDeny:      []string{".git/hooks/", "/ws/" + p + "/x/.git/config"},
			DenyRead:       []string{"/home/" + p, "/cred/" + p},
			CredDir:        "/cred/" + p + "/exec",
			Pins:           []sandbox.Pin{{Path: "/ws/" + p + "/s.sh", Source: "/pin/" + p}},
			ToolCache:      &sandbox.ToolCache{Root: "/cache/" + p, Dir: "/cache/" + p + "/agent"},
		}
		return spec, Plan{TempDir: "/tmp/" + p, ProxyPort: 1234}
	}
	plainSpec, plainPlan := build("PLAIN")
	plain, err := Profile(plainSpec, plainPlan)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.Contains(p, "PLAIN") || strings.Contains(p, "/") || p == "" || p == "." || p == ".." {
			// A path element: the test compares element for element.
			return
		}
		spec, plan := build(p)
		got, err := Profile(spec, plan)
		if err != nil {
			if !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("Profile refused %q: %v", p, err)
			}
			return
		}
		want := strings.ReplaceAll(plain, "PLAIN", p)
		gotTree, wantTree := parse(t, got), parseLax(plain, p)
		if !reflect.DeepEqual(gotTree, wantTree) {
			t.Fatalf("path %q changed the profile's structure:\n%s\nwant the structure of\n%s", p, got, want)
		}
	})
}

// parseLax parses the plain profile and puts p where PLAIN was in each
// string: the structure a profile for p must have.
func parseLax(plain, p string) []any {
	tree, err := parseSexp(plain)
	if err != nil {
		panic(err)
	}
	var sub func(x any) any
	sub = func(x any) any {
		switch v := x.(type) {
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = sub(e)
			}
			return out
		case str:
			return str(strings.ReplaceAll(string(v), "PLAIN", p))
		}
		return x
	}
	return sub(tree).([]any)
}

// The s-expressions of a profile: lists ([]any), symbols (sym), strings
// (str) and regex literals (rx).
type (
	sym string
	str string
	rx  string
)

func parse(t *testing.T, profile string) []any {
	t.Helper()
	tree, err := parseSexp(profile)
	if err != nil {
		t.Fatalf("the profile does not parse: %v\n%s", err, profile)
	}
	return tree
}

// parseSexp reads SBPL as TinyScheme does: ; comments to the end of the
// line, strings with \\ and \" escapes, #"…" regex literals, atoms.
func parseSexp(s string) ([]any, error) {
	var stack [][]any
	var top []any
	add := func(x any) {
		if len(stack) == 0 {
			top = append(top, x)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], x)
		}
	}
	readString := func(i int) (string, int, error) {
		var b strings.Builder
		for i++; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 >= len(s) {
					return "", 0, fmt.Errorf("backslash at the end")
				}
				i++
				b.WriteByte(s[i])
			case '"':
				return b.String(), i + 1, nil
			default:
				b.WriteByte(s[i])
			}
		}
		return "", 0, fmt.Errorf("unterminated string")
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, []any{})
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			add(l)
			i++
		case c == '"':
			v, j, err := readString(i)
			if err != nil {
				return nil, err
			}
			add(str(v))
			i = j
		case c == '#' && i+1 < len(s) && s[i+1] == '"':
			v, j, err := readString(i + 1)
			if err != nil {
				return nil, err
			}
			add(rx(v))
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \n\t()\";", rune(s[j])) {
				j++
			}
			add(sym(s[i:j]))
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed lists", len(stack))
	}
	return top, nil
}
