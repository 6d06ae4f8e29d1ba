package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad is what every in-process gatehouse exec does first: the
// defaults under a small user file, validated.
func BenchmarkLoad(b *testing.B) {
	home := b.TempDir()
	dir := filepath.Join(home, ".config", "gatehouse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("exec:\n  sandbox:\n    warm_pool: 0\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := DefaultLoadOptions("linux", home, func(string) string { return "" })
	for b.Loop() {
		if _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}
