package assemble

import (
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/audit"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/socket"
	"github.com/gatehouse-dev/gatehouse/service/toolcache"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// EnvKeyringService names the keychain service Gatehouse's items live
// under. Only tests set it, so that they never touch the user's own items;
// it chooses another item name in the same OS keychain, nothing else.
const EnvKeyringService = "GATEHOUSE_KEYRING_SERVICE"

// Paths are where one user's Gatehouse keeps its files, and its keychain:
// what the service, gatehouse exec and every other face need to find them.
// Locate computes them once from the environment; the constructors here
// take them and read no environment of their own. It is plain data: a
// test builds one on temporary directories and a keyring.Memory.
type Paths struct {
	Home     string // the user's home directory
	Config   string // the configuration directory
	State    string // the state directory (audit trail, lock, saved rules)
	Cache    string // the cache directory
	Socket   string // the admission API's socket
	Relay    string // the relays' FIFO directory (0711)
	Audit    string // the audit database
	Trusted  string // the trusted-workspaces file (service/trust)
	Launch   string // where the dashboard writes its sign-in pages
	ProbeVer string // the sandbox probe's version cache

	// ToolCacheRoot is the directory of the agents' tool caches
	// (service/toolcache); CredentialDir is where each execution's
	// credential files are made (service/broker).
	ToolCacheRoot string
	CredentialDir string

	// Private are Gatehouse's own files, hidden from every command: the
	// configuration and state directories, and the user file when it
	// lies outside them. TrustPrivate adds what no workspace may be, lie
	// in or hold: the socket's directory, the credential directory and
	// the caches.
	Private      []string
	TrustPrivate []string

	// HostPath is the PATH commands find the host's tools in. GoConfig is
	// the directory of Go's environment file and GoEnv the variables that
	// come before it (GOPROXY, GOMODCACHE, GOPATH), which the tool caches
	// read (ToolHost).
	HostPath string
	GoConfig string
	GoEnv    map[string]string

	// ClaudeSettings is Claude Code's user settings file
	// ($CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json),
	// which doctor reads.
	ClaudeSettings string

	// InitPath is the gatehouse-init binary; "" finds it beside this one
	// (pipeline.FindInit). Tests name their own binary.
	InitPath string

	// Keys is the keychain: credentials, the audit trail's key, the
	// egress CA and the export's headers.
	Keys keyring.Store
}

// Locate returns the paths of the user whose configuration opts loads
// (opts.Home, opts.UserFile), with the environment read through getenv,
// and the OS keychain.
func Locate(opts policy.LoadOptions, getenv func(string) string) Paths {
	goos, home := runtime.GOOS, opts.Home
	sp := socket.Locate(goos, home, getenv)
	p := Paths{
		Home:          home,
		Config:        policy.ConfigDir(goos, home, getenv("XDG_CONFIG_HOME")),
		State:         sp.State,
		Cache:         policy.CacheDir(goos, home, getenv("XDG_CACHE_HOME")),
		Socket:        sp.Socket,
		Relay:         sp.Relay,
		CredentialDir: broker.DefaultDir(getenv("XDG_RUNTIME_DIR")),
		HostPath:      getenv("PATH"),
		Keys:          keyring.NewOS(getenv(EnvKeyringService)),
	}
	p.Audit = filepath.Join(p.State, audit.FileName)
	p.ClaudeSettings = filepath.Join(home, ".claude", "settings.json")
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
		p.ClaudeSettings = filepath.Join(d, "settings.json")
	}
	p.Trusted = filepath.Join(p.State, trust.FileName)
	p.ProbeVer = filepath.Join(p.State, "probe-cache.json")
	// The dashboard's sign-in pages lie beside the socket, in the
	// directory only this user enters, which no sandbox sees.
	p.Launch = filepath.Join(filepath.Dir(p.Socket), "dashboard")
	p.ToolCacheRoot = filepath.Join(p.Cache, "sandbox")

	p.Private = []string{p.Config, p.State}
	// The user file is listed unless a directory above already hides it
	// (bubblewrap cannot bind over a file inside a masked directory).
	f := opts.UserFile
	if abs, err := filepath.Abs(f); f != "" && err == nil {
		f = abs
	}
	if f != "" && !strings.HasPrefix(f, p.Config+string(filepath.Separator)) && !strings.HasPrefix(f, p.State+string(filepath.Separator)) {
		p.Private = append(p.Private, f)
	}
	// The default cache place is in policy.AutorunHome too.
	p.TrustPrivate = append(append([]string(nil), p.Private...),
		socket.Dir(goos, home, getenv("XDG_RUNTIME_DIR"), p.State),
		p.CredentialDir,
		p.Cache)

	p.GoConfig = getenv("XDG_CONFIG_HOME")
	switch {
	case goos == "darwin":
		p.GoConfig = filepath.Join(home, "Library", "Application Support")
	case p.GoConfig == "" || !filepath.IsAbs(p.GoConfig):
		p.GoConfig = filepath.Join(home, ".config")
	}
	p.GoEnv = map[string]string{}
	for _, k := range []string{"GOPROXY", "GOMODCACHE", "GOPATH"} {
		if v := getenv(k); v != "" {
			p.GoEnv[k] = v
		}
	}
	return p
}

// ToolHost is what the tool caches take from the host's tools: Go's
// module cache and proxy as the go command would see them. It reads Go's
// environment file, so each executor asks again.
func (p Paths) ToolHost() toolcache.Host {
	mod, proxy := toolcache.HostGo(p.Home, p.GoConfig, func(k string) string { return p.GoEnv[k] })
	return toolcache.Host{Home: p.Home, GoModCache: mod, GoProxy: proxy}
}
