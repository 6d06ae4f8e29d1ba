package cli

// This file is `gatehouse cred`: credentials in the OS keychain. A value is
// read from a terminal with echo off, or from standard input; nothing here
// ever prints one, not even in an error.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/egressca"
)

var credCmd = &command{name: "cred",
	summary: "store credentials in the OS keychain for commands (cred set|import|list|rm|rotate-ca)",
	usage:   credUsage,
	subs: []*command{
		{name: "cred set", run: func(_ context.Context, env *Env, args []string) error { return credSet(env, args) }},
		{name: "cred import", usage: credImportUsage, flags: credImport, interspersed: true},
		{name: "cred list", aliases: []string{"ls"}, flags: credList}, // -h there is an unknown flag
		{name: "cred rm", aliases: []string{"remove"}, run: func(_ context.Context, env *Env, args []string) error { return credRemove(env, args) }},
		{name: "cred rotate-ca", run: func(_ context.Context, env *Env, args []string) error { return credRotateCA(env, args) }},
	},
}

const credUsage = `usage:
  gatehouse cred set ID       store a credential: typed at a prompt (not echoed),
                              or read from standard input
  gatehouse cred import gh [--id ID] [--host HOST] [--yes]
                              copy gh's token (gh auth token) into the keychain,
                              after asking; prints the lines that mask it
  gatehouse cred list [--json]
  gatehouse cred rm ID
  gatehouse cred rotate-ca    replace the egress CA masked credentials use

An ID is 1 to 64 lower-case letters, digits and underscores. A value must be
at least 8 bytes. Values live in the OS keychain only (service "gatehouse");
commands get them as variables or files the configuration maps
(exec.credentials), or by writing ${credential:ID}. A credential bound to
hosts is masked: commands get a placeholder, and the egress proxy, with a
certificate authority of this machine's own (kept in the keychain, shown by
'gatehouse doctor'), puts the value in requests to those hosts. See
docs/credentials.md.`

// credRotateCA replaces the egress CA. Executions that started before
// keep the one they trust until they end.
func credRotateCA(env *Env, args []string) error {
	if len(args) > 0 {
		return usagef("cred rotate-ca: unexpected argument %q", args[0])
	}
	old, _ := egressca.Peek(keyStore(env))
	ca, err := egressca.Rotate(keyStore(env), time.Now())
	if err != nil {
		return keychainError(fmt.Errorf("cred rotate-ca: %w", err))
	}
	if old != nil {
		fmt.Fprintf(env.Stdout, "replaced the egress CA %s\n", old.Fingerprint())
	}
	fmt.Fprintf(env.Stdout, "egress CA: SHA-256 %s, expires %s (keychain item %s)\n", ca.Fingerprint(), ca.Cert.NotAfter.Local().Format("2006-01-02"), egressca.Item)
	return nil
}

// credID checks the one argument of set and rm.
func credID(cmd string, args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef("cred %s: want one credential ID", cmd)
	}
	if !broker.ValidID(args[0]) {
		return "", usagef("cred %s: %q is not a credential id; an id is %s", cmd, args[0], broker.IDRule)
	}
	return args[0], nil
}

// keychainError adds the keychain's remedy to err.
func keychainError(err error) error {
	if h := keyring.Hint(err); h != "" {
		return withHint(err, h)
	}
	return err
}

func credSet(env *Env, args []string) error {
	id, err := credID("set", args)
	if err != nil {
		return err
	}
	value, err := readValue(env, id)
	if err != nil {
		return err
	}
	if err := broker.CheckValue(value); err != nil {
		return fmt.Errorf("cred set %s: %w", id, err)
	}
	if err := broker.Set(keyStore(env), id, value, time.Now()); err != nil {
		return keychainError(fmt.Errorf("cred set %s: %w", id, err))
	}
	fmt.Fprintf(env.Stdout, "stored credential %s in the keychain\n", id)
	return nil
}

// readValue reads a value: at a prompt with echo off when standard input
// is a terminal, else all of standard input, less one final newline.
func readValue(env *Env, id string) (string, error) {
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(env.Stderr, "Value for %s (not echoed): ", id)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", fmt.Errorf("cred set %s: reading the value: %w", id, err)
		}
		return string(b), nil
	}
	b, err := io.ReadAll(io.LimitReader(env.Stdin, broker.MaxValueLen+3))
	if err != nil {
		return "", fmt.Errorf("cred set %s: reading the value from standard input: %w", id, err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return "", withHint(fmt.Errorf("cred set %s: standard input is empty", id),
			"type the value at a prompt (run it in a terminal), or pipe it in: gatehouse cred set "+id+" < file")
	}
	return string(b), nil
}

func credList(fl *flag.FlagSet) runFunc {
	asJSON := fl.Bool("json", false, "")
	return func(ctx context.Context, env *Env, args []string) error {
		if fl.NArg() > 0 {
			return usagef("cred list: unexpected argument %q", fl.Arg(0))
		}
		entries, err := broker.List(keyStore(env))
		if err != nil {
			return keychainError(fmt.Errorf("cred list: %w", err))
		}
		if *asJSON {
			if entries == nil {
				entries = []broker.Entry{}
			}
			writeJSON(env.Stdout, entries)
			return nil
		}
		if len(entries) == 0 {
			fmt.Fprintln(env.Stderr, "no credentials stored; add one with 'gatehouse cred set ID'")
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSET")
		for _, e := range entries {
			set := "-"
			if !e.SetAt.IsZero() {
				set = e.SetAt.Local().Format("2006-01-02 15:04:05")
			}
			fmt.Fprintf(tw, "%s\t%s\n", e.ID, set)
		}
		return tw.Flush()
	}
}

func credRemove(env *Env, args []string) error {
	id, err := credID("rm", args)
	if err != nil {
		return err
	}
	err = broker.Remove(keyStore(env), id)
	if errors.Is(err, keyring.ErrNotFound) {
		return withHint(fmt.Errorf("cred rm: no credential %q in the keychain", id), "'gatehouse cred list' shows the ids stored")
	}
	if err != nil {
		return keychainError(fmt.Errorf("cred rm %s: %w", id, err))
	}
	fmt.Fprintf(env.Stdout, "removed credential %s from the keychain\n", id)
	return nil
}
