package analysis

// This file marks the shapes of the built-in rules: the last pass of
// Analyze sets them on nodes, and each built-in rule of service/policy
// names the shape it denies.

import (
	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"path"
	"slices"
	"strings"
)

// A Shape is a dangerous form a command has, whatever it is spelled like:
// the facts a built-in rule of the policy denies.
type Shape string

// The shapes.
const (
	// ShapeRmRoot: recursive rm of /, the home directory or a top-level
	// system directory.
	ShapeRmRoot Shape = "rm-root"
	// ShapeFindDeleteRoot: find -delete (or -exec rm) starting at one of
	// those.
	ShapeFindDeleteRoot Shape = "find-delete-root"
	// ShapeDiskWrite: writing to a disk device, mkfs, wipefs, shred of a
	// device.
	ShapeDiskWrite Shape = "disk-write"
	// ShapeChmodRoot: recursive chmod, chown or chgrp of a root.
	ShapeChmodRoot Shape = "chmod-recursive-root"
	// ShapeCurlPipeShell: code fetched from the network is run.
	ShapeCurlPipeShell Shape = "curl-pipe-shell"
	// ShapeDecodePipeShell: decoded data is run as code.
	ShapeDecodePipeShell Shape = "decode-pipe-shell"
	// ShapeShellRCWrite: a shell startup file is written.
	ShapeShellRCWrite Shape = "shell-rc-write"
	// ShapeForcePushProtected: a protected branch is force-pushed or
	// deleted.
	ShapeForcePushProtected Shape = "git-force-push-protected"
	// ShapeSecretExfiltration: a credential file is sent to the network.
	ShapeSecretExfiltration Shape = "secret-exfiltration"
	// ShapeForkBomb: a function runs itself in a background pipeline.
	ShapeForkBomb Shape = "fork-bomb"
)

// shapeMatchers match each shape on one node, in the order of AllShapes.
var shapeMatchers = []struct {
	shape Shape
	match func(t *Tree, n *Node) bool
}{
	{ShapeRmRoot, rmRoot},
	{ShapeFindDeleteRoot, findDeleteRoot},
	{ShapeDiskWrite, diskWrite},
	{ShapeChmodRoot, chmodRoot},
	{ShapeCurlPipeShell, func(t *Tree, n *Node) bool { return runsCodeFrom(t, n, isFetcher) }},
	{ShapeDecodePipeShell, func(t *Tree, n *Node) bool { return runsCodeFrom(t, n, isDecoder) }},
	{ShapeShellRCWrite, rcWrite},
	{ShapeForcePushProtected, forcePush},
	{ShapeSecretExfiltration, exfiltration},
	{ShapeForkBomb, func(t *Tree, n *Node) bool { return n.funcSelfPipe }},
}

// AllShapes lists every shape.
var AllShapes = func() []Shape {
	out := make([]Shape, len(shapeMatchers))
	for i, m := range shapeMatchers {
		out[i] = m.shape
	}
	return out
}()

// markShapes is the last pass of Analyze: it sets on every node the
// shapes it has.
func (t *Tree) markShapes() {
	if t.ParseError != nil {
		return
	}
	for _, n := range t.Nodes {
		for _, m := range shapeMatchers {
			if m.match(t, n) {
				n.shapes = append(n.shapes, m.shape)
			}
		}
	}
}

// HasShape reports whether n has shape s.
func (n *Node) HasShape(s Shape) bool { return slices.Contains(n.shapes, s) }

// systemDirs are top-level directories whose recursive removal (or
// permission change) wrecks a system.
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
	"/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "/Library", "/Applications",
	"/private", "/snap", "/mnt", "/media", "/usr/bin", "/usr/lib", "/usr/local", "/usr/share", "/var/lib",
}

// rootish reports whether the path p (static, absolute) is /, the home
// directory or its parent, or a top-level system directory, possibly with
// a trailing /* or /.*.
func (t *Tree) rootish(p string) bool {
	if p == "" || !path.IsAbs(p) {
		return false
	}
	// Strip trailing /* and /.* (and slashes): /*, //*, ~/* name the same
	// directory's contents.
	for i := 0; i < 16 && len(p) > 1; i++ {
		q := strings.TrimRight(p, "/")
		for _, suf := range []string{"/*", "/.*", "/{*,.*}"} {
			q = strings.TrimSuffix(q, suf)
		}
		if q == "" {
			q = "/"
		}
		if q == p {
			break
		}
		p = q
	}
	p = path.Clean(p)
	if p == "/" || slices.Contains(systemDirs, p) {
		return true
	}
	if home := t.opts.Env["HOME"]; home != "" && home != "/" {
		if p == path.Clean(home) || p == path.Dir(path.Clean(home)) {
			return true
		}
	}
	return false
}

// targets returns the static values of n's operands, resolved against the
// working directories n may run in: for a dynamic operand, its value if
// every unknown part were empty.
func (t *Tree) targets(n *Node, operands []Arg) []string {
	var out []string
	for _, x := range operands {
		v := x.Value
		if x.Dynamic {
			if !x.hasIfEmpty || x.ifEmpty == "" {
				continue
			}
			v = x.ifEmpty
		}
		if path.IsAbs(v) {
			out = append(out, v)
			continue
		}
		for _, d := range n.cwds {
			out = append(out, cleanJoin(d, v)+trailingGlob(v))
		}
	}
	return out
}

// trailingGlob keeps a trailing /* of a relative operand through Join.
func trailingGlob(v string) string {
	if v == "*" || v == ".*" {
		return "/*"
	}
	return ""
}

// operands returns args that are not options (every arg after "--").
func operands(args []Arg) []Arg {
	var out []Arg
	for i, x := range args {
		if !x.Dynamic && x.Value == "--" {
			return append(out, args[i+1:]...)
		}
		if !x.Dynamic && strings.HasPrefix(x.Value, "-") && x.Value != "-" {
			continue
		}
		out = append(out, x)
	}
	return out
}

func hasFlag(args []Arg, flags ...string) bool {
	for _, x := range args {
		if x.Dynamic {
			continue
		}
		if x.Value == "--" {
			return false
		}
		for _, f := range flags {
			if ArgHasFlag(x.Value, f) {
				return true
			}
		}
	}
	return false
}

func args1(n *Node) []Arg {
	if len(n.Argv) < 2 {
		return nil
	}
	return n.Argv[1:]
}

func rmRoot(t *Tree, n *Node) bool {
	if n.Kind != KindCommand || n.Name != "rm" {
		return false
	}
	args := args1(n)
	recursive := hasFlag(args, "-r", "-R", "--recursive")
	for _, p := range t.targets(n, operands(args)) {
		if t.rootish(p) && (recursive || strings.HasSuffix(p, "*")) {
			return true
		}
	}
	// find / | xargs rm: the operands are whatever find lists.
	if n.Via == "xargs" {
		for _, id := range n.stdinFrom {
			if f := t.Nodes[id]; f.Name == "find" && f.Kind == KindCommand && t.findsUnderRoot(f) {
				return true
			}
		}
	}
	return false
}

// findsUnderRoot reports whether find node f starts at a rootish path.
func (t *Tree) findsUnderRoot(f *Node) bool {
	var starts []Arg
	for _, x := range args1(f) {
		if !x.Dynamic && (strings.HasPrefix(x.Value, "-") || x.Value == "(" || x.Value == "!") {
			break
		}
		starts = append(starts, x)
	}
	if len(starts) == 0 {
		starts = []Arg{{Value: "."}}
	}
	for _, p := range t.targets(f, starts) {
		if t.rootish(p) {
			return true
		}
	}
	return false
}

func findDeleteRoot(t *Tree, n *Node) bool {
	if n.Kind != KindCommand || n.Name != "find" || !n.findDelete {
		return false
	}
	return t.findsUnderRoot(n)
}

func chmodRoot(t *Tree, n *Node) bool {
	if n.Kind != KindCommand || n.Name != "chmod" && n.Name != "chown" && n.Name != "chgrp" {
		return false
	}
	args := args1(n)
	if !hasFlag(args, "-R", "--recursive") {
		return false
	}
	ops := operands(args)
	if len(ops) < 2 {
		return false
	}
	for _, p := range t.targets(n, ops[1:]) {
		if t.rootish(p) {
			return true
		}
	}
	return false
}

// isDiskDevice reports whether p names a block device holding a disk.
func isDiskDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	if strings.HasPrefix(p, "/dev/mapper/") || strings.HasPrefix(p, "/dev/disk/") {
		return true
	}
	base := strings.TrimPrefix(p, "/dev/")
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "nbd"} {
		if strings.HasPrefix(base, prefix) {
			return true
		}
	}
	return false
}

func diskWrite(t *Tree, n *Node) bool {
	for _, r := range n.Redirs {
		if isWriteOp(r.Op) && isDiskDevice(r.Target) {
			return true
		}
	}
	if n.Kind != KindCommand {
		return false
	}
	args := args1(n)
	switch {
	case strings.HasPrefix(n.Name, "mkfs") || n.Name == "wipefs" || n.Name == "mkswap" || n.Name == "blkdiscard" || n.Name == "mke2fs" || n.Name == "newfs":
		return true
	case n.Name == "dd":
		for _, x := range args {
			if strings.HasPrefix(x.Value, "of=") && isDiskDevice(strings.TrimPrefix(x.Value, "of=")) {
				return true
			}
		}
	case n.Name == "shred" || n.Name == "fdisk" || n.Name == "sfdisk" || n.Name == "sgdisk" || n.Name == "gdisk" || n.Name == "parted" || n.Name == "cfdisk":
		if hasFlag(args, "-l", "--list", "-p", "--print") {
			return false
		}
		for _, x := range operands(args) {
			if isDiskDevice(x.Value) {
				return true
			}
		}
	case n.Name == "diskutil":
		for _, x := range args {
			if strings.HasPrefix(strings.ToLower(x.Value), "erase") || x.Value == "partitionDisk" || x.Value == "zeroDisk" || x.Value == "randomDisk" {
				return true
			}
		}
	}
	return false
}

func isWriteOp(op string) bool {
	switch op {
	case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
		return true
	}
	return false
}

// fetchers are commands that bring bytes from the network.
var fetchers = map[string]bool{
	"curl": true, "wget": true, "fetch": true, "http": true, "https": true, "xh": true, "aria2c": true,
	"nc": true, "ncat": true, "netcat": true, "socat": true, "lynx": true, "links": true, "w3m": true,
	"ftp": true, "tftp": true, "ssh": true, "scp": true, "sftp": true, "rsync": true, "lwp-download": true,
	"lwp-request": true, "GET": true, "telnet": true,
}

func isFetcher(n *Node) bool { return n.Kind == KindCommand && fetchers[n.Name] }

// isDecoder reports whether n turns encoded bytes into something else:
// base64 -d, xxd -r, openssl enc -d, printf of escapes, rev...
func isDecoder(n *Node) bool {
	if n.Kind != KindCommand {
		return false
	}
	args := args1(n)
	switch n.Name {
	case "base64", "base32", "basenc", "gbase64":
		return hasFlag(args, "-d", "--decode", "-D")
	case "xxd":
		return hasFlag(args, "-r", "-revert")
	case "openssl":
		return hasFlag(args, "-d", "-base64", "-a") || len(args) > 0 && args[0].Value == "base64"
	case "uudecode", "rev", "unxz", "xzcat", "gunzip", "zcat", "bunzip2", "bzcat", "unzstd", "zstdcat", "lzcat", "uncompress":
		return true
	case "gzip", "xz", "bzip2", "zstd":
		return hasFlag(args, "-d", "--decompress")
	case "tr":
		// rot13 and friends.
		return len(args) >= 2 && strings.Contains(args[0].Value, "-Z") && (strings.Contains(args[1].Value, "N-Z") || strings.Contains(args[1].Value, "n-z"))
	case "printf", "echo":
		for _, x := range args {
			if strings.Contains(x.Value, `\x`) || strings.Contains(x.Value, `\0`) || strings.Contains(x.Value, `\u`) {
				return true
			}
		}
	case "perl", "python", "python3", "ruby", "node":
		for _, x := range args {
			if strings.Contains(x.Value, "decode") || strings.Contains(x.Value, "unpack") || strings.Contains(x.Value, "b64") {
				return true
			}
		}
	}
	return false
}

// runsCodeFrom reports whether n runs code that comes (through pipes,
// substitutions or files this command writes) from a node is matches.
func runsCodeFrom(t *Tree, n *Node, is func(*Node) bool) bool {
	if !n.runsCode {
		return false
	}
	seen := map[int]bool{}
	queue := append(append([]int{}, n.codeFrom...), n.writtenBy...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if id < 0 || id >= len(t.Nodes) || seen[id] {
			continue
		}
		seen[id] = true
		m := t.Nodes[id]
		if is(m) {
			return true
		}
		queue = append(queue, m.stdinFrom...)
		queue = append(queue, m.codeFrom...)
		queue = append(queue, m.writtenBy...)
		// A wrapper's payload and a substitution's commands feed it too.
		for _, c := range t.Nodes[id+1:] {
			if c.Parent == id {
				queue = append(queue, c.ID)
			}
		}
	}
	return false
}

// rcFiles are shell startup files: a write to one runs later, outside
// any sandbox.
var rcFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".bash_aliases": true,
	".profile": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true, ".zlogout": true,
	".kshrc": true, ".mkshrc": true, ".cshrc": true, ".tcshrc": true, ".login": true, ".logout": true,
	".envrc": true, "config.fish": true,
}

var rcPaths = []string{"/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshrc", "/etc/zsh/zshrc",
	"/etc/zsh/zshenv", "/etc/zsh/zprofile", "/etc/environment", "/etc/csh.cshrc", "/etc/csh.login"}

func isRC(p string) bool {
	p = path.Clean(p)
	return rcFiles[path.Base(p)] || slices.Contains(rcPaths, p) || strings.HasPrefix(p, "/etc/profile.d/")
}

func rcWrite(t *Tree, n *Node) bool {
	for _, r := range n.Redirs {
		if isWriteOp(r.Op) && !r.Dynamic && isRC(r.Target) {
			return true
		}
	}
	for _, p := range n.writesTo {
		if isRC(p) {
			return true
		}
	}
	return false
}

// protectedBranch reports whether a branch name is one force-pushes must
// not rewrite.
func protectedBranch(b string) bool {
	b = strings.TrimPrefix(b, "refs/heads/")
	switch b {
	case "main", "master", "trunk", "develop", "development", "production", "prod", "stable", "release":
		return true
	}
	return strings.HasPrefix(b, "release/") || strings.HasPrefix(b, "release-") || strings.HasPrefix(b, "releases/")
}

func forcePush(t *Tree, n *Node) bool {
	if n.Kind != KindCommand || n.Name != "git" || n.gitPush == nil {
		return false
	}
	g := n.gitPush
	if !g.force && !g.delete && !g.plusRef {
		return false
	}
	if g.all {
		return true
	}
	if len(g.refs) == 0 {
		// The current branch: protected, or not known.
		return !g.branchKnown || protectedBranch(g.branch)
	}
	for _, r := range g.refs {
		if r.Dynamic {
			return true
		}
		ref := strings.TrimPrefix(r.Value, "+")
		forced := g.force || g.delete || strings.HasPrefix(r.Value, "+") || strings.HasPrefix(r.Value, ":")
		if !forced {
			continue
		}
		src, dst, ok := strings.Cut(ref, ":")
		if !ok {
			dst = src
		}
		if dst == "HEAD" || dst == "@" {
			if !g.branchKnown || protectedBranch(g.branch) {
				return true
			}
			continue
		}
		if protectedBranch(dst) {
			return true
		}
	}
	return false
}

// secret reports whether p is a credential file: in the deny-read set the
// caller passes (the executor's: every credential store, sandbox.DenyRead),
// or a private key or credential file by its name wherever it is.
func (t *Tree) secret(p string) bool {
	p = path.Clean(p)
	for _, d := range t.opts.DenyRead {
		if fspath.Within(p, d) {
			return true
		}
	}
	switch path.Base(p) {
	case "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".git-credentials", ".pgpass":
		return true
	}
	return p == "/etc/shadow" || p == "/etc/gshadow"
}

// readsSecret reports whether n names a credential file in its arguments
// or its stdin.
// A word whose value is only known at run time is judged by the values
// the text assigns the variables in it (Arg.maybe).
func (t *Tree) readsSecret(n *Node) bool {
	for _, x := range args1(n) {
		vals := []string{x.Value}
		if x.Dynamic {
			vals = x.maybe
		}
		for _, v := range vals {
			if i := strings.Index(v, "@"); i >= 0 && (i == 0 || v[i-1] == '=') {
				v = v[i+1:]
			}
			if i := strings.IndexByte(v, '<'); i >= 0 {
				v = v[i+1:]
			}
			for _, p := range t.targets(n, []Arg{{Value: v}}) {
				if t.secret(p) {
					return true
				}
			}
		}
	}
	for _, r := range n.Redirs {
		if r.Op != "<" {
			continue
		}
		if !r.Dynamic && t.secret(r.Target) {
			return true
		}
		for _, v := range r.maybe {
			for _, p := range t.targets(n, []Arg{{Value: v}}) {
				if t.secret(p) {
					return true
				}
			}
		}
	}
	return false
}

func exfiltration(t *Tree, n *Node) bool {
	if !isFetcher(n) {
		return false
	}
	if t.readsSecret(n) {
		return true
	}
	for _, id := range n.stdinFrom {
		if id >= 0 && id < len(t.Nodes) && t.readsSecret(t.Nodes[id]) {
			return true
		}
	}
	return false
}
