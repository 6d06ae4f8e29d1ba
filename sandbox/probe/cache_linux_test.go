package probe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestVersionCache(t *testing.T) {
	dir := t.TempDir()
	// A fake bwrap that reports a version and counts its runs.
	count := filepath.Join(dir, "count")
	fake := filepath.Join(dir, "bwrap")
	script := "#!/bin/sh\necho x >> " + count + "\necho bubblewrap 0.9.1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	SetVersionCache(filepath.Join(dir, "state", "probe-cache.json"))
	defer SetVersionCache("")
	runs := func() int {
		b, _ := os.ReadFile(count)
		return len(b) / 2
	}
	for i := 0; i < 3; i++ {
		if f := Gather(fake); f.BwrapVersion != "bubblewrap 0.9.1" {
			t.Fatalf("version = %q", f.BwrapVersion)
		}
	}
	if got := runs(); got != 1 {
		t.Errorf("bwrap --version ran %d times, want once", got)
	}
	// Another process (an empty memory cache) reads the file.
	versionCache.Lock()
	versionCache.mem = nil
	versionCache.Unlock()
	Gather(fake)
	if got := runs(); got != 1 {
		t.Errorf("the cache file was not used: %d runs", got)
	}
	// Changing the binary invalidates the entry.
	os.WriteFile(fake, []byte(script+"# changed\n"), 0o755)
	if f := Gather(fake); f.BwrapVersion != "bubblewrap 0.9.1" || runs() != 2 {
		t.Errorf("after a change: version %q, %d runs, want a fresh run", f.BwrapVersion, runs())
	}
}
