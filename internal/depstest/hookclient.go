package depstest

// HookClient is what the small clients agents start on every tool call
// link (gatehouse-hook alone, the front program gatehouse with more): the
// hooks' input and output, the wire types, the socket's client and the
// relay, and nothing of the configuration, the audit store, the keychain
// or the OS service manager. Each program's allowlist is this and its own
// packages.
var HookClient = []string{
	"github.com/gatehouse-dev/gatehouse/hook/claude",
	"github.com/gatehouse-dev/gatehouse/hook/codex",
	"github.com/gatehouse-dev/gatehouse/hook/cursor",
	"github.com/gatehouse-dev/gatehouse/hook/decide",
	"github.com/gatehouse-dev/gatehouse/hook/gemini",
	"github.com/gatehouse-dev/gatehouse/hook/hookcmd",
	// hookjson reads the hooks' shared JSON (input, matcher groups);
	// standard library and jsonobj only, no initialisation.
	"github.com/gatehouse-dev/gatehouse/hook/hookjson",
	"github.com/gatehouse-dev/gatehouse/hook/relay",
	// fspath is one standard-library function (Within) that sandbox
	// shares with the analysis; it has no initialisation.
	"github.com/gatehouse-dev/gatehouse/internal/fspath",
	// jsonobj edits settings files (the hooks' installers); standard
	// library only, no initialisation.
	"github.com/gatehouse-dev/gatehouse/internal/jsonobj",
	// program names the gatehouse program (a path beside this one);
	// standard library only, no initialisation.
	"github.com/gatehouse-dev/gatehouse/internal/program",
	"github.com/gatehouse-dev/gatehouse/internal/scale",
	"github.com/gatehouse-dev/gatehouse/sandbox",
	"github.com/gatehouse-dev/gatehouse/service/api",
	"github.com/gatehouse-dev/gatehouse/service/dirs",
	"github.com/gatehouse-dev/gatehouse/service/localapi",
	"github.com/gatehouse-dev/gatehouse/service/socket",
	"github.com/gatehouse-dev/gatehouse/service/termesc",
	"github.com/gatehouse-dev/gatehouse/service/waitline",
	"golang.org/x/sys/unix",
	"golang.org/x/sys/windows",
}
