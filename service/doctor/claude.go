package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/hook/claude"
)

// Claude is Claude Code's settings as doctor read them, and how they
// drifted from Gatehouse's policy (hook/claude Drift): this user's
// findings and those only IT's managed settings fix (ForEveryUser) alike.
type Claude struct {
	ManagedFiles []string         `json:"managed_files"`
	UserFile     string           `json:"user_file"`
	Drift        []claude.Finding `json:"drift"`
	// Used says Claude Code is set up here: managed settings exist, or
	// the user's settings directory does. Only then is what the managed
	// settings would add worth saying.
	Used bool `json:"used"`
}

// readClaude reads Claude Code's managed settings (managed, or where
// Claude Code reads them, with the drop-ins beside) and the user's (user,
// when known), and says how they drifted from Gatehouse's policy.
func readClaude(managed, user string) Claude {
	if managed == "" {
		managed = claude.ManagedPath(runtime.GOOS)
	}
	r := Claude{ManagedFiles: []string{}, Drift: []claude.Finding{}}
	o := claude.DriftOptions{ManagedPath: managed, Executable: isExecutable}
	var unreadable []claude.Finding
	read := func(file string) ([]byte, bool) {
		b, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, false
		case err != nil:
			unreadable = append(unreadable, claude.Finding{Code: "settings_unreadable", File: file,
				Detail: fmt.Sprintf("%s cannot be read: %v", file, errors.Unwrap(err)),
				Remedy: "make it readable by every user (root-owned, mode 0644)"})
			return nil, false
		}
		return b, true
	}
	files := []string{managed}
	dir := filepath.Join(filepath.Dir(managed), "managed-settings.d")
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents { // in name order
			if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") && !e.IsDir() {
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	for _, f := range files {
		if b, ok := read(f); ok {
			o.Managed = append(o.Managed, claude.SettingsFile{Path: f, Data: b})
			r.ManagedFiles = append(r.ManagedFiles, f)
		}
	}
	r.Used = len(r.ManagedFiles) > 0
	if user != "" {
		r.UserFile = user
		o.User.Path = user
		o.User.Data, _ = read(user)
		if fi, err := os.Stat(filepath.Dir(user)); err == nil && fi.IsDir() {
			r.Used = true
		}
	}
	r.Drift = append(unreadable, claude.Drift(o)...)
	if r.Drift == nil {
		r.Drift = []claude.Finding{}
	}
	return r
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
