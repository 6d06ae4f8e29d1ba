package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// versionTimeout bounds `bwrap --version`, which normally takes a few
// milliseconds.
const versionTimeout = 5 * time.Second

func gatherOS(f *Facts, bwrapPath string) {
	gatherBwrap(f, bwrapPath)
	f.UnprivUsernsClone = readSysctl("/proc/sys/kernel/unprivileged_userns_clone")
	f.MaxUserNamespaces = readSysctl("/proc/sys/user/max_user_namespaces")
	f.AppArmorRestrictUserns = readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
}

func gatherBwrap(f *Facts, bwrapPath string) {
	name := bwrapPath
	if name == "" {
		name = "bwrap"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		switch {
		case bwrapPath == "":
			f.BwrapError = "bwrap not found in PATH"
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
			f.BwrapError = fmt.Sprintf("bwrap not found at %s", bwrapPath)
		default:
			f.BwrapError = fmt.Sprintf("bwrap at %s is not usable: %v", bwrapPath, errors.Unwrap(err))
		}
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	f.BwrapFound = true
	f.BwrapPath = path

	// os.Stat follows symlinks: the mode bits that matter are the target's.
	fi, err := os.Stat(path)
	if err == nil {
		f.BwrapSetuid = fi.Mode()&os.ModeSetuid != 0
	}
	key := versionKey(path, fi)
	if v, ok := cachedVersion(key); ok {
		f.BwrapVersion = v
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{} // --version needs nothing; pass nothing
	out, err := cmd.Output()
	if err != nil {
		f.BwrapError = fmt.Sprintf("running %s --version: %v", path, err)
		return
	}
	f.BwrapVersion = strings.TrimSpace(string(out))
	storeVersion(key, f.BwrapVersion)
}

// readSysctl reads an integer knob; nil when the file is absent or does not
// hold an integer.
func readSysctl(path string) *int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseSysctl(string(b))
}
