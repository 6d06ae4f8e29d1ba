// Package trust keeps the workspace roots the user trusted, in addition
// to policy.workspace_roots, in one file of the state directory, and says
// what may never be trusted (Guard).
//
// The file is JSON, mode 0600 in a 0700 directory, and versioned:
//
//	{"version": 1, "workspaces": [{"path": "/home/u/src/app", "added": "2025-01-02T15:04:05Z", "by": "cli"},
//	  {"path": "/home/u/work/api", "added": "2025-01-03T09:00:00Z", "by": "approval", "agents": ["claude-code"]}]}
//
// An entry without agents is trusted for every agent; one with agents
// only for those (a person answered "Trust ~/work/api for claude-code").
//
// Each path is absolute and resolved (no symlink on the way) when it is
// added. The file is replaced whole (a temporary file, then a rename), so
// a reader sees the old list or the new one; writers take a lock on
// workspaces.json.lock beside it, so the CLI and the service adding at
// once lose neither. A file that cannot be read or parsed is an error
// naming it: Add and Remove refuse to write over it, and Roots holds no
// roots until it is fixed.
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// FileName is the trusted-workspaces file in the state directory.
const FileName = "workspaces.json"

// Version is the file format this package reads and writes.
const Version = 1

// ErrNotTrusted is returned by Remove for a directory that is not trusted.
var ErrNotTrusted = errors.New("not a trusted workspace")

// RefusedHint is the remedy for a RefusedError, for every surface that
// adds workspaces.
const RefusedHint = "a trusted workspace is writable by every command: trust a project directory, like ~/src/app"

// A RefusedError is a directory that may never be trusted.
type RefusedError struct {
	Dir     string // as asked
	Path    string // where it resolved: the top of its git repository, if in one
	Problem string // a phrase that follows "is" (Guard.Problem)
}

func (e *RefusedError) Error() string {
	if e.Path == filepath.Clean(e.Dir) {
		return fmt.Sprintf("refused: %s is %s", e.Path, e.Problem)
	}
	return fmt.Sprintf("refused: %s resolves to %s, %s", e.Dir, e.Path, e.Problem)
}

// file is the format on disk.
type file struct {
	Version    int     `json:"version"`
	Workspaces []entry `json:"workspaces"`
}

type entry struct {
	Path  string    `json:"path"`
	Added time.Time `json:"added"`
	By    string    `json:"by"`
	// Agents are the agents it is trusted for; none: every agent.
	Agents []string `json:"agents,omitempty"`
}

// forAgent reports whether e is trusted for agent.
func (e entry) forAgent(agent string) bool {
	return len(e.Agents) == 0 || slices.Contains(e.Agents, agent)
}

// Store is the trusted-workspaces file. It is safe for concurrent use.
// Roots is on every command's path: it reads the file again only when its
// identity, size or modification time changed.
type Store struct {
	path string

	mu      sync.Mutex
	seen    os.FileInfo // the file the cache was read from; nil: none read
	entries []entry
	err     error // why the file could not be read, as of the last look
}

// Open returns the Store of the file at path. It reads nothing yet: a
// missing file is an empty list.
func Open(path string) *Store { return &Store{path: path} }

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

// Roots returns the trusted roots, for any agent: absolute paths,
// resolved when they were added. A file that cannot be read yields none;
// Err says why.
func (s *Store) Roots() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.Path
	}
	return out
}

// RootsFor returns the roots trusted for agent: those trusted for every
// agent and those trusted for it by name.
func (s *Store) RootsFor(agent string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	var out []string
	for _, e := range s.entries {
		if e.forAgent(agent) {
			out = append(out, e.Path)
		}
	}
	return out
}

// Err returns why the file cannot be read now, or nil.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.err
}

// List returns the trusted workspaces, in the order they were added, with
// when and by what.
func (s *Store) List() ([]api.Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	if s.err != nil {
		return nil, s.err
	}
	out := make([]api.Workspace, len(s.entries))
	for i, e := range s.entries {
		out[i] = api.Workspace{Path: e.Path, Added: e.Added, Origin: api.WorkspaceTrusted, By: e.By, Agents: slices.Clone(e.Agents)}
	}
	return out, nil
}

// refresh reads the file again when it changed since it was last read.
// s.mu is held.
func (s *Store) refresh() {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.seen, s.entries, s.err = nil, nil, nil
		return
	}
	if err == nil && s.seen != nil && os.SameFile(fi, s.seen) && fi.Size() == s.seen.Size() && fi.ModTime().Equal(s.seen.ModTime()) {
		return
	}
	f, fi, err := s.read()
	if err != nil {
		s.seen, s.entries, s.err = nil, nil, err
		return
	}
	s.seen, s.entries, s.err = fi, f.Workspaces, nil
}

// read reads and checks the file; a missing one is an empty list (and a
// nil FileInfo). The FileInfo is the opened file's own, so that it
// describes exactly what was read.
func (s *Store) read() (*file, os.FileInfo, error) {
	fd, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: Version}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading trusted workspaces: %w", err)
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("reading trusted workspaces: %w", err)
	}
	var f file
	dec := json.NewDecoder(fd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("trusted workspaces %s: %v; fix or remove the file", s.path, err)
	}
	if f.Version != Version {
		return nil, nil, fmt.Errorf("trusted workspaces %s: version %d is not supported; want %d", s.path, f.Version, Version)
	}
	for i, e := range f.Workspaces {
		if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path {
			return nil, nil, fmt.Errorf("trusted workspaces %s: workspaces[%d].path: %q is not an absolute, clean path; fix or remove the file", s.path, i, e.Path)
		}
		if e.Agents != nil && len(e.Agents) == 0 || slices.Contains(e.Agents, "") {
			return nil, nil, fmt.Errorf("trusted workspaces %s: workspaces[%d].agents: an empty name or list; leave agents out to trust it for every agent, or fix or remove the file", s.path, i)
		}
	}
	return &f, fi, nil
}

// Add trusts dir for every agent, unless g refuses it (a *RefusedError),
// and returns the path trusted: dir resolved through its symlinks, or the
// top of the git repository it lies in (Top, stopping below g.Home).
// Adding a path already trusted changes nothing and is not an error. by
// says what adds it (api.ByCLI, api.ByTray, "approval").
func (s *Store) Add(dir, by string, g Guard) (string, error) {
	return s.AddFor(dir, "", by, g)
}

// AddFor is Add for one agent: dir is trusted for agent alone (and stays
// trusted for every agent if it was). An empty agent is every agent.
func (s *Store) AddFor(dir, agent, by string, g Guard) (string, error) {
	abs := dir
	if !filepath.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		abs = wd + string(filepath.Separator) + dir // not Abs: its Clean would take ".." before the symlinks
	}
	real := filepath.FromSlash(fspath.Resolve(filepath.ToSlash(abs)))
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, unwrapPath(err))
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	top := Top(real, g.Home)
	if p := g.Problem(top); p != "" {
		return "", &RefusedError{Dir: dir, Path: top, Problem: p}
	}
	err := s.update(func(f *file) bool {
		i := slices.IndexFunc(f.Workspaces, func(e entry) bool { return e.Path == top })
		switch {
		case i < 0:
			e := entry{Path: top, Added: time.Now().UTC().Truncate(time.Second), By: by}
			if agent != "" {
				e.Agents = []string{agent}
			}
			f.Workspaces = append(f.Workspaces, e)
		case len(f.Workspaces[i].Agents) == 0:
			return false // every agent's already
		case agent == "":
			f.Workspaces[i].Agents = nil
		case slices.Contains(f.Workspaces[i].Agents, agent):
			return false
		default:
			f.Workspaces[i].Agents = append(f.Workspaces[i].Agents, agent)
		}
		return true
	})
	if err != nil {
		return "", err
	}
	return top, nil
}

// Remove stops trusting dir, named as it was added or by where it
// resolves now. A directory that is not trusted is an error naming it
// that wraps ErrNotTrusted.
func (s *Store) Remove(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	names := []string{abs, filepath.FromSlash(policy.Resolve(filepath.ToSlash(abs)))}
	found := false
	err = s.update(func(f *file) bool {
		n := len(f.Workspaces)
		f.Workspaces = slices.DeleteFunc(f.Workspaces, func(e entry) bool { return slices.Contains(names, e.Path) })
		found = len(f.Workspaces) < n
		return found
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s is %w", dir, ErrNotTrusted)
	}
	return nil
}

// update reads the file under the writers' lock, lets change edit it, and
// writes it back when change reports a change.
func (s *Store) update(change func(*file) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("making the trusted workspaces' directory: %w", err)
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("locking trusted workspaces %s: %w", s.path, err)
	}
	defer unlock()
	f, _, err := s.read()
	if err != nil {
		return err
	}
	if !change(f) {
		return nil
	}
	if f.Workspaces == nil {
		f.Workspaces = []entry{}
	}
	f.Version = Version
	if err := s.write(f); err != nil {
		return fmt.Errorf("writing trusted workspaces %s: %w", s.path, err)
	}
	s.seen = nil // read it again, as written
	return nil
}

// write replaces the file with f: a temporary file (0600) beside it,
// synced, then renamed over it.
func (s *Store) write(f *file) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename's own durability; a directory may not sync everywhere
		d.Close()
	}
	return nil
}

// unwrapPath returns a *fs.PathError's cause, whose path the caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
