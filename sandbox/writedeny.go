package sandbox

// This file holds the one list of names no command may write in a
// workspace. Every backend protects them (bubblewrap binds them read-only,
// Seatbelt's profile leaves them out of the writable roots), the executor
// adds exec.sandbox.write_deny, and docs/executor.md prints the same list
// (docs_test.go keeps them equal).

// DefaultWriteDeny are the names, relative to each workspace root and each
// repository found in one, that commands may not write: places where a write
// becomes code that runs later outside any sandbox. A trailing slash marks a
// directory. Names under ".git/" apply only where .git is a directory.
var DefaultWriteDeny = []string{
	".git/hooks/",
	".git/config",
	".vscode/",
	".idea/",
	".claude/",
	".git/config.worktree",
	".git/info/attributes",
	".mcp.json",
	".envrc",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin",
	// Git obeys these through its configuration: filter and diff drivers,
	// submodules, hooks under core.hooksPath.
	".gitattributes", ".gitmodules", ".gitconfig", ".husky/",
	// Editors, agents and loaders that run what they find on the host.
	".cursor/", ".zed/", ".devcontainer/", ".devcontainer.json", ".gemini/",
	".codex/", ".agents/", ".ripgreprc",
	".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
	".mise.toml", "mise.toml", ".yarnrc.yml", ".yarnrc", ".npmrc", ".pnpmfile.cjs",
}

// GitDirWriteDeny are the files and directories, relative to a git
// directory, that git reads to locate or configure a repository: where it
// finds the common directory (commondir), the worktree a linked git
// directory belongs to (gitdir), the configuration (config,
// config.worktree) with the programs it names (core.fsmonitor,
// core.hooksPath, filters), attributes that select drivers, the hooks,
// and other object stores (objects/info/alternates). Bubblewrap
// protects them in every git directory it finds in a workspace: a .git
// directory, where a .git file points, each submodule's
// (.git/modules/...), each linked worktree's (.git/worktrees/*) and the
// directory a commondir names.
var GitDirWriteDeny = []string{
	"commondir", "gitdir", "config", "config.worktree", "info/attributes",
	"hooks/", "objects/info/alternates",
}
