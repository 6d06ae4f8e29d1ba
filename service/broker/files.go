package broker

// An execution's credential files are made, and removed, through
// descriptors (internal/nofollow): the parent directory is opened once
// and checked (a directory, this user's, closed to others; privateDir),
// the execution's directory is made and opened below it, and each file
// is created exclusively in it. Nothing below the parent is followed, so
// a link put there cannot turn a credential file into a write elsewhere,
// nor the removal at the end into one of another directory.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/nofollow"
)

// materialiseFiles writes each file 0400 (name → contents) into a new
// directory in parent and returns the directory's path. The directory is named after this
// process and the execution so that one left behind by a killed process
// can be recognised and removed.
func materialiseFiles(parent string, contents map[string]string, execID string) (string, error) {
	p, err := privateDir(parent)
	if err != nil {
		return "", err
	}
	defer p.Close()
	sweepDir(p)
	name := strconv.Itoa(os.Getpid()) + "-" + safeName(execID)
	if err := p.Mkdir(name, 0o700); err != nil {
		return "", fmt.Errorf("making the credential directory: %w", err)
	}
	d, err := p.OpenDir(name)
	if err != nil {
		p.RemoveAll(name)
		return "", fmt.Errorf("making the credential directory: %w", err)
	}
	defer d.Close()
	for _, file := range sortedKeys(contents) {
		if err := d.WriteFile(file, []byte(contents[file]), 0o400); err != nil {
			p.RemoveAll(name)
			return "", fmt.Errorf("writing credential file %s: %w", file, errors.Unwrap(err))
		}
	}
	return filepath.Join(parent, name), nil
}

// removeDir removes the execution directory dir and what is in it,
// following no link below its parent.
func removeDir(dir string) error {
	p, err := nofollow.Open(filepath.Dir(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer p.Close()
	return p.RemoveAll(filepath.Base(dir))
}

// sweepDir removes directories left in parent by processes that no
// longer run (a gatehouse killed in the middle of an execution).
func sweepDir(parent *nofollow.Dir) {
	entries, err := parent.ReadDir(".")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, _, ok := strings.Cut(e.Name, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n == os.Getpid() || alive(n) {
			continue
		}
		parent.RemoveAll(e.Name)
	}
}
