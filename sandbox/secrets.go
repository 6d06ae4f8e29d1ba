package sandbox

// This file holds the one list of credential stores no command may read,
// and the rules that follow it to where the secrets actually are. The
// executor hides every entry (an empty tmpfs over a directory, /dev/null
// over a file), the analysis treats a read of one as reading a secret, and
// docs/executor.md prints the same list (a test keeps them equal).

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SecretStores are the home-relative paths where developer tools keep
// credentials. A directory hides everything below it.
var SecretStores = []string{
	// Keys, agents and password stores.
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings",
	".config/op", ".op",
	// Generic credential files.
	".netrc", ".git-credentials", ".config/git/credentials",
	// Cloud providers and infrastructure tools.
	".aws", ".azure", ".config/gcloud", ".oci", ".bluemix", ".config/doctl",
	".config/hcloud", ".kube", ".minikube", ".docker",
	".config/containers/auth.json", ".terraform.d/credentials.tfrc.json",
	".terraformrc", ".vault-token", ".pulumi/credentials.json", ".fly",
	".wrangler", ".config/.wrangler", ".local/share/com.vercel.cli",
	".config/netlify", ".tsh", ".s3cfg", ".boto", ".config/rclone",
	".databrickscfg", ".snowsql", ".snowflake", ".dbt", ".config/ngrok",
	".ngrok2", ".circleci/cli.yml", ".travis/config.yml", ".config/sops",
	// Code hosts and AI tools.
	".config/gh", ".config/hub", ".config/glab-cli", ".config/github-copilot",
	".claude", ".codex", ".gemini/oauth_creds.json",
	".huggingface/token", ".cache/huggingface/token", ".kaggle",
	// Package registries.
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc",
	".config/pypoetry/auth.toml", ".gem/credentials", ".cargo/credentials",
	".cargo/credentials.toml", ".m2/settings.xml", ".m2/settings-security.xml",
	".gradle/gradle.properties", ".config/composer/auth.json",
	".composer/auth.json", ".nuget/NuGet/NuGet.Config",
	// Databases.
	".pgpass", ".my.cnf", ".mylogin.cnf",
	// Histories, which hold what was typed: tokens on command lines.
	".bash_history", ".zsh_history", ".local/share/fish/fish_history",
	".python_history", ".node_repl_history", ".psql_history",
	".mysql_history", ".sqlite_history", ".rediscli_history",
	// Browser and mail profiles: cookies, saved passwords, sessions.
	".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium",
	".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi",
	".config/opera", "snap/firefox", "snap/chromium",
	// macOS.
	"Library/Keychains", "Library/Cookies", "Library/Safari",
	"Library/Application Support/Google/Chrome",
	"Library/Application Support/Firefox",
	"Library/Application Support/BraveSoftware",
	"Library/Application Support/Microsoft Edge",
}

// Bounds of the walk that looks for symlinks inside a hidden directory,
// which runs before every execution: hidden directories such as ~/.ssh are
// small; a browser profile is not walked past them.
const (
	linkScanDepth   = 2
	linkScanEntries = 512
)

// DenyRead returns the paths to hide for the user whose home is home: the
// credential stores, then extra (absolute paths: configuration, Gatehouse's
// own), then what those entries lead to:
//
//   - the target of every symlink found inside a hidden directory, so that
//     a key in ~/.ssh that links to a file kept elsewhere is hidden at its
//     own path too;
//   - the target of a hidden entry that is itself a symlink;
//   - every IdentityFile and CertificateFile that ~/.ssh/config names.
//
// Targets already inside a hidden path are not repeated. The result holds
// absolute, clean paths; paths that do not exist are kept (the backend
// skips them), so the list does not depend on the order things appear in.
func DenyRead(home string, extra []string) []string { return DenyReadBy(home, extra, os.Lstat) }

// DenyReadBy is DenyRead with the hidden entries looked at by lstat: a
// caller that has just looked at the same paths (service/policy's
// RootJudge.Lstat, at one step of an execution) answers from what it
// found rather than asking the kernel again.
func DenyReadBy(home string, extra []string, lstat func(string) (fs.FileInfo, error)) []string {
	var out []string
	for _, p := range SecretStores {
		out = append(out, filepath.Join(home, p))
	}
	for _, p := range extra {
		out = append(out, filepath.Clean(p))
	}
	hidden := slices.Clone(out)
	add := func(p string) {
		p = filepath.Clean(p)
		if !slices.ContainsFunc(out, func(d string) bool { return Within(p, d) }) {
			out = append(out, p)
		}
	}
	for _, d := range hidden {
		fi, err := lstat(d)
		switch {
		case err != nil:
			// Most stores are absent; nothing to follow.
		case fi.Mode()&fs.ModeSymlink != 0:
			if real, err := filepath.EvalSymlinks(d); err == nil {
				add(real)
			}
		case fi.IsDir():
			for _, t := range linkTargets(d) {
				add(t)
			}
		}
	}
	for _, f := range sshKeyFiles(home) {
		add(f)
		if real, err := filepath.EvalSymlinks(f); err == nil {
			add(real)
		}
	}
	return out
}

// linkTargets returns the resolved targets of the symlinks below the
// directory dir, within the walk's bounds. A dangling link yields nothing.
func linkTargets(dir string) []string {
	var out []string
	n := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: nothing below it can be followed either
		}
		if n++; n > linkScanEntries {
			return fs.SkipAll
		}
		if e.IsDir() && p != dir && strings.Count(p[len(dir):], string(filepath.Separator)) >= linkScanDepth {
			return fs.SkipDir
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				out = append(out, real)
			}
		}
		return nil
	})
	return out
}

// sshKeyFiles returns the IdentityFile and CertificateFile paths named in
// ~/.ssh/config (and the files it Includes from ~/.ssh), with ~ and %d
// expanded; tokens that depend on the host (%h, %r, …) cannot name one
// file and are left out.
func sshKeyFiles(home string) []string {
	var out []string
	seen := map[string]bool{}
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > 4 || seen[file] {
			return
		}
		seen[file] = true
		f, err := os.Open(file)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			key, val := sshConfigLine(sc.Text())
			switch key {
			case "identityfile", "certificatefile":
				if p, ok := sshPath(home, val); ok {
					out = append(out, p)
				}
			case "include":
				for _, pat := range strings.Fields(val) {
					p, ok := sshPath(home, pat)
					if !ok {
						continue
					}
					if !filepath.IsAbs(pat) && !strings.HasPrefix(pat, "~") {
						p = filepath.Join(home, ".ssh", pat)
					}
					matches, _ := filepath.Glob(p)
					for _, m := range matches {
						read(m, depth+1)
					}
				}
			}
		}
	}
	read(filepath.Join(home, ".ssh", "config"), 0)
	return out
}

// sshConfigLine splits one line of ssh_config into its lower-case keyword
// and its argument ("Key value", "Key=value", "Key = "value""); a comment
// or blank line yields "".
func sshConfigLine(line string) (key, val string) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", ""
	}
	i := strings.IndexAny(line, " \t=")
	if i < 0 {
		return strings.ToLower(line), ""
	}
	key, val = strings.ToLower(line[:i]), strings.TrimLeft(line[i:], " \t")
	val = strings.TrimSpace(strings.TrimPrefix(val, "="))
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		val = val[1 : len(val)-1]
	}
	return key, val
}

// sshPath expands ~ and %d (the home directory) and %% in an ssh_config
// path; a relative path is taken from the home directory, as ssh does for
// IdentityFile. It reports false for a path with other % tokens.
func sshPath(home, p string) (string, bool) {
	if p == "" || strings.EqualFold(p, "none") {
		return "", false
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = home + p[1:]
	}
	p = strings.ReplaceAll(p, "%d", home)
	p = strings.ReplaceAll(p, "%%", "\x00")
	if strings.Contains(p, "%") {
		return "", false
	}
	p = strings.ReplaceAll(p, "\x00", "%")
	if !filepath.IsAbs(p) {
		p = filepath.Join(home, p)
	}
	return filepath.Clean(p), true
}
