package probe

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The version of a bwrap binary is cached, in memory and optionally in a
// file, keyed by the binary's identity (path, device, inode, size, change
// time): running `bwrap --version` on every call costs a process start.
// Any change to the binary changes the key.

var versionCache struct {
	sync.Mutex
	file string
	mem  map[string]string
}

func setVersionCache(file string) {
	versionCache.Lock()
	defer versionCache.Unlock()
	versionCache.file = file
}

func versionKey(path string, fi fs.FileInfo) string {
	if fi == nil {
		return ""
	}
	return fmt.Sprintf("%s|%s", path, fileIdentity(fi))
}

func cachedVersion(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	versionCache.Lock()
	defer versionCache.Unlock()
	if v, ok := versionCache.mem[key]; ok {
		return v, true
	}
	if versionCache.file == "" {
		return "", false
	}
	b, err := os.ReadFile(versionCache.file)
	if err != nil {
		return "", false
	}
	var disk map[string]string
	if json.Unmarshal(b, &disk) != nil {
		return "", false
	}
	v, ok := disk[key]
	if ok {
		remember(key, v)
	}
	return v, ok
}

func storeVersion(key, v string) {
	if key == "" || v == "" {
		return
	}
	versionCache.Lock()
	defer versionCache.Unlock()
	remember(key, v)
	if versionCache.file == "" {
		return
	}
	b, err := json.Marshal(map[string]string{key: v})
	if err != nil {
		return
	}
	dir := filepath.Dir(versionCache.file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".probe-cache-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), versionCache.file) != nil {
		os.Remove(tmp.Name())
	}
}

func remember(key, v string) {
	if versionCache.mem == nil {
		versionCache.mem = map[string]string{}
	}
	versionCache.mem[key] = v
}
