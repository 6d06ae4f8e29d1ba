package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindInit(t *testing.T) {
	dir := t.TempDir()
	prog := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exe := prog("bin/gatehouse")
	nextTo := prog("bin/gatehouse-init")
	usrLib := prog("usr/lib/gatehouse/gatehouse-init")
	localLib := prog("usr/local/lib/gatehouse/gatehouse-init")
	configured := prog("opt/init")
	if err := os.WriteFile(filepath.Join(dir, "noexec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := InitDirs
	defer func() { InitDirs = old }()
	InitDirs = []string{filepath.Dir(usrLib), filepath.Dir(localLib)}

	for _, c := range []struct {
		name                 string
		configured, explicit string
		exe                  string
		remove               []string
		want, where          string
		err                  []string
	}{
		{name: "configured first", configured: configured, explicit: "/test/bin", exe: exe, want: configured, where: "exec.sandbox.init_path"},
		{name: "configured missing", configured: filepath.Join(dir, "nope"), exe: exe,
			err: []string{"exec.sandbox.init_path " + filepath.Join(dir, "nope") + " does not exist"}},
		{name: "configured not executable", configured: filepath.Join(dir, "noexec"), exe: exe, err: []string{"is not executable"}},
		{name: "the caller's", explicit: "/test/bin", exe: exe, want: "/test/bin"},
		{name: "next to gatehouse", exe: exe, want: nextTo, where: "next to " + exe},
		{name: "lib", exe: exe, remove: []string{nextTo}, want: usrLib},
		{name: "local lib", exe: exe, remove: []string{nextTo, usrLib}, want: localLib},
		{name: "none", exe: exe, remove: []string{nextTo, usrLib, localLib},
			err: []string{"looked at " + nextTo + ", " + usrLib + ", " + localLib, "set exec.sandbox.init_path"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.remove {
				os.Chmod(p, 0o644)
				defer os.Chmod(p, 0o755)
			}
			in := findInit(c.configured, c.explicit, c.exe)
			if c.err != nil {
				if in.Err == nil || in.Path != "" {
					t.Fatalf("findInit = %+v, want an error", in)
				}
				for _, s := range c.err {
					if !strings.Contains(in.Err.Error(), s) {
						t.Errorf("error %q does not say %q", in.Err, s)
					}
				}
				return
			}
			if in.Err != nil || in.Path != c.want || c.where != "" && in.Where != c.where {
				t.Errorf("findInit = %+v, want %s (%s)", in, c.want, c.where)
			}
		})
	}
}
