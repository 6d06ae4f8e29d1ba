package assemble

import (
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

func TestLocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the XDG places are Linux's")
	}
	t.Parallel()
	home := "/home/u"
	env := map[string]string{
		"XDG_STATE_HOME": "/s",
		"XDG_CACHE_HOME": "relative", // ignored, as XDG says
		"PATH":           "/usr/bin:/bin",
		"GOPROXY":        "https://proxy.example",
	}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name     string
		userFile string
		private  []string
	}{
		{"default user file", "", []string{"/home/u/.config/gatehouse", "/s/gatehouse"}},
		{"user file inside the config dir", "/home/u/.config/gatehouse/config.yaml", []string{"/home/u/.config/gatehouse", "/s/gatehouse"}},
		{"user file elsewhere", "/work/gh.yaml", []string{"/home/u/.config/gatehouse", "/s/gatehouse", "/work/gh.yaml"}},
		{"a sibling named like the config dir", "/home/u/.config/gatehouse2.yaml", []string{"/home/u/.config/gatehouse", "/s/gatehouse", "/home/u/.config/gatehouse2.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Locate(policy.LoadOptions{Home: home, UserFile: tc.userFile}, getenv)
			if !slices.Equal(p.Private, tc.private) {
				t.Errorf("Private %q, want %q", p.Private, tc.private)
			}
			for _, c := range []struct{ name, got, want string }{
				{"State", p.State, "/s/gatehouse"},
				{"Audit", p.Audit, filepath.Join("/s/gatehouse", "audit.db")},
				{"Relay", p.Relay, "/s/gatehouse/relay"},
				{"Socket", p.Socket, "/s/gatehouse/run/gatehouse.sock"},
				{"Launch", p.Launch, "/s/gatehouse/run/dashboard"},
				{"ToolCacheRoot", p.ToolCacheRoot, "/home/u/.cache/gatehouse/sandbox"},
				{"HostPath", p.HostPath, "/usr/bin:/bin"},
				{"GoConfig", p.GoConfig, "/home/u/.config"},
				{"ToolHost().GoProxy", p.ToolHost().GoProxy, "https://proxy.example"},
			} {
				if c.got != c.want {
					t.Errorf("%s %q, want %q", c.name, c.got, c.want)
				}
			}
			for _, want := range append(slices.Clone(tc.private), "/s/gatehouse/run", p.CredentialDir, "/home/u/.cache/gatehouse") {
				if !slices.Contains(p.TrustPrivate, want) {
					t.Errorf("TrustPrivate %q lacks %q", p.TrustPrivate, want)
				}
			}
			if p.Keys == nil {
				t.Error("no key store")
			}
		})
	}
}
