package cli

// This file is `gatehouse cred import gh`: the token the GitHub CLI keeps
// in the host's keyring, copied once into Gatehouse's keychain with the
// person's consent, so that nobody pastes it. A sandboxed gh cannot reach
// the host's keyring (nor should it); given the token masked, it holds a
// placeholder and the egress proxy puts the token on the wire to GitHub.
//
// The value goes from gh's standard output to the keychain and nowhere
// else: what is shown, asked and printed names the id, the kind of token
// and its length. gh's own error text is shown, one line; its standard
// output never.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/termesc"
)

const credImportUsage = `usage: gatehouse cred import gh [--id ID] [--host HOST] [--yes]

Copies the token 'gh auth token' prints into the keychain as ID (default
github_token), after asking on the terminal; --yes stores it without asking
(for scripts). --host asks gh for its token for a GitHub Enterprise Server
host instead of github.com. It then prints the exec.credentials lines that
give the token to commands masked, bound to the GitHub hosts.`

// githubHost is gh's default host.
const githubHost = "github.com"

func credImport(fl *flag.FlagSet) runFunc {
	id := fl.String("id", "github_token", "")
	host := fl.String("host", "", "")
	yes := fl.Bool("yes", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) != 1 || args[0] != "gh" {
			got := "nothing"
			if len(args) > 0 {
				got = fmt.Sprintf("%q", strings.Join(args, " "))
			}
			return usagef("cred import: want the tool to import from, gh; got %s", got)
		}
		if !broker.ValidID(*id) {
			return usagef("cred import: --id: %q is not a credential id; an id is %s", *id, broker.IDRule)
		}
		if h := *host; h != "" && (strings.HasPrefix(h, "-") || strings.ContainsAny(h, "/ \t\r\n@")) {
			return usagef("cred import: --host: %q is not a host name; want one like ghe.example.com", h)
		}
		return importGH(ctx, env, keyStore(env), ghImport{id: *id, host: *host, yes: *yes})
	}
}

// ghImport is what cred import gh was asked for.
type ghImport struct {
	id, host string // host "" is gh's default, github.com
	yes      bool   // store without asking
}

// importGH reads gh's token for o.host and stores it in store as o.id,
// once the person said yes (or o.yes).
func importGH(ctx context.Context, env *Env, store keyring.Store, o ghImport) error {
	if !o.yes && !onTerminal(env) {
		return withHint(errors.New("cred import gh: no terminal to ask whether to store gh's token"),
			"run it in a terminal, or pass --yes to store it without asking")
	}
	gh := inPath(env, "gh")
	if gh == "" {
		return withHint(errors.New("cred import gh: gh (the GitHub CLI) is not in PATH"),
			"install gh and log in (gh auth login), or store a token by hand: gatehouse cred set "+o.id)
	}
	argv := []string{"auth", "token"}
	from := "gh auth token"
	if o.host != "" {
		argv = append(argv, "--hostname", o.host)
		from += " --hostname " + o.host
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, gh, argv...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		why := firstLine(errOut.String())
		if why == "" {
			why = err.Error()
		}
		login := "gh auth login"
		if o.host != "" {
			login += " --hostname " + o.host
		}
		return withHint(fmt.Errorf("cred import gh: %s failed: %s", from, termesc.Line(why)), "log in with gh first ("+login+"), then import again")
	}
	value := strings.TrimRight(out.String(), "\r\n")
	if value == "" || strings.ContainsAny(value, " \t\r\n") {
		return fmt.Errorf("cred import gh: %s printed no single token (%d bytes, %d lines)", from, out.Len(), strings.Count(out.String(), "\n"))
	}
	if err := broker.CheckValue(value); err != nil {
		return fmt.Errorf("cred import gh: %s: %w", from, err)
	}

	kind := broker.ShapeOf(value).Kind
	if kind == "" {
		kind = "a token"
	}
	fmt.Fprintf(env.Stderr, "%s gave %s, %d bytes.\n", from, kind, len(value))
	if at, ok := storedAt(store, o.id); ok {
		fmt.Fprintf(env.Stderr, "It replaces the credential %s%s.\n", o.id, at)
	}
	if !o.yes {
		fmt.Fprintf(env.Stderr, "Store it in the keychain as %s? [y/N] ", o.id)
		answer, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("cred import gh: nothing stored: the answer was not yes")
		}
	}
	if err := broker.Set(store, o.id, value, time.Now()); err != nil {
		return keychainError(fmt.Errorf("cred import gh: storing %s: %w", o.id, err))
	}
	fmt.Fprintf(env.Stdout, "stored credential %s in the keychain (from %s)\n\n", o.id, from)
	where := "your configuration file"
	if opts, err := loadOptions(env, ""); err == nil {
		home, _ := homeDir(env)
		where = fspath.Tilde(opts.UserFile, home)
	}
	fmt.Fprintf(env.Stdout, "To give it to commands masked (they hold a placeholder; the egress proxy\nputs the token in requests to these hosts alone), add to %s:\n\n%s", where, ghSnippet(o.id, o.host))
	return nil
}

// ghSnippet is the configuration that binds credential id, masked, to the
// hosts gh reaches: GitHub's API hosts, or an Enterprise Server host,
// for which gh reads GH_ENTERPRISE_TOKEN.
func ghSnippet(id, host string) string {
	variable, hosts := "GH_TOKEN", []string{host}
	if host == "" || host == githubHost {
		for _, s := range broker.Services {
			if s.Name == "GitHub" {
				hosts = s.Hosts
			}
		}
	} else {
		variable = "GH_ENTERPRISE_TOKEN"
	}
	list := make([]string, len(hosts))
	for i, h := range hosts {
		list[i] = h
		if strings.HasPrefix(h, "*") {
			list[i] = `"` + h + `"`
		}
	}
	l := strings.Join(list, ", ")
	return fmt.Sprintf("exec:\n  credentials:\n    env:\n      %s: {credential: %s, hosts: [%s]}\npolicy:\n  egress_allowlist: [%s]   # with the entries you have\n", variable, id, l, l)
}

// storedAt says whether id is in store already, and when it was set
// (" set 2006-01-02 15:04", or "" when not known).
func storedAt(store keyring.Store, id string) (string, bool) {
	entries, err := broker.List(store)
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		if e.ID == id {
			if e.SetAt.IsZero() {
				return "", true
			}
			return " set " + e.SetAt.Local().Format("2006-01-02 15:04"), true
		}
	}
	return "", false
}

// inPath returns the executable name in the PATH of env, "" for none.
func inPath(env *Env, name string) string {
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// firstLine is s's first non-empty line, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
