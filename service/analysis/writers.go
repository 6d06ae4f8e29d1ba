package analysis

// This file records the files commands write (cp, mv, install, ln, tee,
// curl -o, sed -i, chmod +x), so that running one later is linked to the write.

import (
	"os"
	"path"
	"strings"
)

// writer records the files a command writes (cp, mv, tee, curl -o...) for
// write-then-run linking.
func (a *analyzer) writer(n *Node, sc *scope) {
	args := n.Argv[1:]
	rec := func(target Arg, w writeRec) {
		if target.Dynamic {
			return
		}
		w.paths = a.absPaths(target.Value, sc)
		n.writesTo = append(n.writesTo, w.paths...)
		if len(w.paths) == 0 {
			n.writesTo = append(n.writesTo, target.Value)
		}
		w.node = n.ID
		w.what = n.Name
		a.writes = append(a.writes, w)
	}
	switch n.Name {
	case "cp", "mv", "install", "ln":
		rest, res := parseOpts(args, optSpec{short: "abdfiHlLnPprsuvxRTZDsSC", shortVal: "tmogS",
			long:    []string{"archive", "force", "interactive", "link", "dereference", "no-dereference", "recursive", "symbolic", "update", "verbose", "relative", "no-target-directory", "parents", "backup", "preserve", "no-clobber", "strip", "compare"},
			longVal: []string{"target-directory", "mode", "owner", "group", "suffix", "reflink", "sparse"}})
		dir := res.vals["t"]
		if d, ok := res.vals["target-directory"]; ok {
			dir = d
		}
		var srcs []Arg
		if dir != "" {
			srcs = rest
		} else if len(rest) >= 2 {
			srcs, rest = rest[:len(rest)-1], rest[len(rest)-1:]
			dir = rest[0].Value
			// -T (and ln -n): the last operand is the target itself, even
			// when it is a directory or a link to one.
			noDeref := res.has("T") || res.has("no-target-directory") || n.Name == "ln" && (res.has("n") || res.has("no-dereference"))
			if len(srcs) == 1 && (noDeref || !strings.HasSuffix(dir, "/") && !a.isDir(dir, sc)) {
				from := a.fromPaths(srcs[0], sc, n.Name == "ln" && res.has("s"))
				rec(rest[0], writeRec{from: from})
				return
			}
		}
		for _, s := range srcs {
			if s.Dynamic {
				continue
			}
			from := a.fromPaths(s, sc, n.Name == "ln" && res.has("s"))
			rec(Arg{Value: path.Join(dir, path.Base(s.Value))}, writeRec{from: from})
		}
	case "tee":
		rest, _ := parseOpts(args, optSpec{short: "aip", long: []string{"append", "ignore-interrupts"}, longOpt: []string{"output-error"}})
		var content *Arg
		if sc.stdin.kind == "text" && !sc.stdin.text.Dynamic {
			t := sc.stdin.text
			content = &t
		} else if sc.stdin.kind == "pipe" && len(sc.stdin.from) == 1 {
			// echo TEXT | tee f: what echo writes.
			if f := a.node(sc.stdin.from[0]); f != nil && f.Kind == KindCommand && f.out != nil && !f.out.Dynamic {
				content = f.out
			}
		}
		for _, f := range rest {
			rec(f, writeRec{content: content})
		}
	case "curl":
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case (v == "-o" || v == "--output") && i+1 < len(args):
				i++
				rec(args[i], writeRec{})
			case strings.HasPrefix(v, "-o") && len(v) > 2 && !strings.HasPrefix(v, "--"):
				rec(Arg{Value: v[2:]}, writeRec{})
			case v == "-O" || v == "--remote-name" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "O"):
				for _, u := range args {
					if strings.Contains(u.Value, "://") && !u.Dynamic {
						rec(Arg{Value: urlBase(u.Value)}, writeRec{})
					}
				}
			}
		}
	case "wget":
		named := false
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case (v == "-O" || v == "--output-document") && i+1 < len(args):
				i++
				named = true
				if args[i].Value != "-" {
					rec(args[i], writeRec{})
				}
			case strings.HasPrefix(v, "--output-document="):
				named = true
				rec(Arg{Value: strings.TrimPrefix(v, "--output-document=")}, writeRec{})
			case strings.HasPrefix(v, "-O") && len(v) > 2:
				named = true
				if v[2:] != "-" {
					rec(Arg{Value: v[2:]}, writeRec{})
				}
			}
		}
		if !named {
			for _, u := range args {
				if strings.Contains(u.Value, "://") && !u.Dynamic {
					rec(Arg{Value: urlBase(u.Value)}, writeRec{})
				}
			}
		}
	case "dd":
		for _, x := range args {
			if strings.HasPrefix(x.Value, "of=") {
				rec(Arg{Value: strings.TrimPrefix(x.Value, "of="), Dynamic: x.Dynamic}, writeRec{})
			}
		}
	case "chmod":
		rest, _ := parseOpts(args, optSpec{short: "cfvR", long: []string{"changes", "silent", "quiet", "verbose", "recursive"}, longVal: []string{"reference"}})
		if len(rest) >= 2 && !rest[0].Dynamic && makesExecutable(rest[0].Value) {
			for _, f := range rest[1:] {
				rec(f, writeRec{chmod: true})
			}
		}
	case "sed", "perl":
		inPlace := false
		for _, x := range args {
			if x.Value == "-i" || strings.HasPrefix(x.Value, "-i") || x.Value == "--in-place" || strings.HasPrefix(x.Value, "--in-place=") ||
				n.Name == "perl" && strings.HasPrefix(x.Value, "-") && strings.Contains(x.Value, "i") {
				inPlace = true
			}
		}
		if inPlace {
			for _, x := range args[1:] {
				if !strings.HasPrefix(x.Value, "-") {
					rec(x, writeRec{})
				}
			}
		}
	}
}

// fromPaths resolves the source of a copy; for a symbolic link, relative
// to the link's directory is close enough.
func (a *analyzer) fromPaths(s Arg, sc *scope, symlink bool) []string {
	if s.Dynamic {
		return nil
	}
	return a.absPaths(s.Value, sc)
}

func (a *analyzer) isDir(p string, sc *scope) bool {
	for _, q := range a.absPaths(p, sc) {
		if fi, err := os.Stat(q); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// makesExecutable reports whether a chmod mode adds an execute bit.
func makesExecutable(mode string) bool {
	if isDigits(mode) {
		for _, c := range mode {
			if (c-'0')&1 != 0 {
				return true
			}
		}
		return false
	}
	for _, part := range strings.Split(mode, ",") {
		if i := strings.IndexAny(part, "+="); i >= 0 && strings.ContainsAny(part[i:], "xX") {
			return true
		}
	}
	return false
}
