package bwrap

// This file records what of a git directory the sweep compares before
// and after a run (gitsweep.go): hooks, by git's hook names, and the
// configuration files with what they include.

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
)

// addHooks fingerprints the entries of a hooks directory h (at path); git's
// own *.sample files are left out where skipSamples.
func (s *gitState) addHooks(h dirFD, path string, skipSamples bool) {
	ents, err := readNames(h, s.buf)
	if err != nil || !s.count(len(ents), path) {
		return
	}
	for _, e := range ents {
		if skipSamples && strings.HasSuffix(e.name, ".sample") {
			continue
		}
		s.add(h, path, e.name, kindHook)
	}
}

// addHooksVia fingerprints the hooks in the directory h (at path) that
// via leads git to: a configuration file's core.hooksPath, or a hooks
// link. Such a directory may hold other files (it is often part of the
// project): only the names git runs as hooks count.
func (s *gitState) addHooksVia(h dirFD, path, via string) {
	ents, err := readNames(h, s.buf)
	if err != nil || !s.count(len(ents), path) {
		return
	}
	for _, e := range ents {
		if !gitHooks[e.name] {
			continue
		}
		s.add(h, path, e.name, kindHook)
		p := filepath.Join(path, e.name)
		if _, ok := s.via[p]; !ok {
			s.via[p] = via
		}
	}
}

// gitHooks are the names git runs as hooks (githooks(5)).
var gitHooks = map[string]bool{
	"applypatch-msg": true, "pre-applypatch": true, "post-applypatch": true,
	"pre-commit": true, "pre-merge-commit": true, "prepare-commit-msg": true,
	"commit-msg": true, "post-commit": true, "pre-rebase": true,
	"post-checkout": true, "post-merge": true, "pre-push": true,
	"pre-receive": true, "update": true, "proc-receive": true,
	"post-receive": true, "post-update": true, "reference-transaction": true,
	"push-to-checkout": true, "pre-auto-gc": true, "post-rewrite": true,
	"sendemail-validate": true, "fsmonitor-watchman": true,
	"p4-changelist": true, "p4-prepare-changelist": true,
	"p4-post-changelist": true, "p4-pre-submit": true, "post-index-change": true,
}

// addConfig fingerprints the configuration file name in d (at dir), and
// what it leads to: the directory core.hooksPath names (relative to base,
// the working tree, or to gitDir for a bare repository) and the files
// include.path and includeIf.*.path name (relative to dir). It reports
// false when one of those could not be reached without following a link.
func (s *gitState) addConfig(d dirFD, dir, name, base, gitDir string, depth int) bool {
	b := s.add(d, dir, name, kindConfig)
	if b == nil {
		return true // absent, or fingerprinted by size: moved when changed
	}
	ok := true
	for _, kv := range configValues(b) {
		switch {
		case kv.key == "core.hookspath":
			p := kv.value
			if strings.HasPrefix(p, "~") {
				continue // the home directory: no workspace root
			}
			if !filepath.IsAbs(p) {
				if base == "" {
					base = gitDir
				}
				p = base + "/" + p
			}
			h, hpath, st := s.openPath(p)
			switch st {
			case pathOpen:
				s.addHooksVia(h, hpath, filepath.Join(dir, name))
				h.close()
			case pathBlocked:
				ok = false
			}
		case kv.key == "include.path" || strings.HasPrefix(kv.key, "includeif.") && strings.HasSuffix(kv.key, ".path"):
			p := kv.value
			if strings.HasPrefix(p, "~") || depth >= includeMaxDepth {
				continue
			}
			if !filepath.IsAbs(p) {
				p = dir + "/" + p
			}
			pdir, pname := filepath.Split(p)
			if !validName(pname) {
				continue
			}
			id, idir, st := s.openPath(pdir)
			switch st {
			case pathOpen:
				if !s.addConfig(id, idir, pname, base, gitDir, depth+1) {
					ok = false
				}
				id.close()
			case pathBlocked:
				ok = false
			}
		}
	}
	return ok
}

// add fingerprints the entry name in d (at dir) and returns its content
// when it is a regular file of at most gitFileMax bytes.
func (s *gitState) add(d dirFD, dir, name string, k gitKind) []byte {
	fp, b := fingerprintContent(d, name)
	if fp != "" {
		p := filepath.Join(dir, name)
		s.files[p] = fp
		s.kinds[p] = k
	}
	return b
}

// fingerprint identifies the content of the entry name in d (a link by its
// text, never followed); "" when there is nothing there.
func fingerprint(d dirFD, name string) string {
	fp, _ := fingerprintContent(d, name)
	return fp
}

// fingerprintContent is fingerprint, with the content it read.
func fingerprintContent(d dirFD, name string) (string, []byte) {
	st, err := statAt(d, name)
	if err != nil {
		return "", nil
	}
	switch {
	case st.isLink():
		t, _ := readlinkAt(d, name)
		return "link:" + t, nil
	case st.isDir():
		return "dir", nil
	case !st.isRegular() || st.size > gitFileMax:
		return fmt.Sprintf("stat:%v:%d:%d:%d", st.mode, st.mtime, st.size, st.ino), nil
	}
	b, err := readAt(d, name, gitFileMax)
	if err != nil {
		return "unreadable", nil
	}
	sum := sha256.Sum256(b)
	return st.mode.Perm().String() + ":" + string(sum[:]), b
}
