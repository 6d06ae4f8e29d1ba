package cli

import (
	"fmt"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/gatehouse-dev/gatehouse/hook/codex"
)

// codexHome is Codex CLI's home: $CODEX_HOME when absolute, else ~/.codex.
func codexHome(env *Env) (string, error) {
	if d := env.Getenv("CODEX_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Clean(d), nil
	}
	home, err := homeDir(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".codex"), nil
}

// installCodex merges Gatehouse's PreToolUse hook into Codex's hooks.json
// and records its trust in config.toml: Codex skips an untrusted hook
// without a word.
func installCodex(env *Env, exe string) error {
	dir, err := codexHome(env)
	if err != nil {
		return err
	}
	hooksFile, configFile := filepath.Join(dir, codex.HooksFile), filepath.Join(dir, codex.ConfigFile)
	old, err := readOptional(hooksFile)
	if err != nil {
		return err
	}
	cmd := codex.HookCommand(hookExe(exe))
	merged, changed, index, err := codex.MergeHook(old, cmd)
	if err != nil {
		return withHint(fmt.Errorf("%s: %w", hooksFile, err), "fix the file (Codex reads it as JSON) and run 'gatehouse install --agent codex' again; nothing was changed")
	}
	oldConfig, err := readOptional(configFile)
	if err != nil {
		return err
	}
	key, hash := codex.TrustKey(hooksFile, index), codex.TrustHash(cmd)
	config, trustChanged := codex.SetTrust(oldConfig, key, hash)
	if err := checkTrust(config, key, hash); err != nil {
		return withHint(fmt.Errorf("%s: %w", configFile, err), "fix the file, or trust the hook in Codex ('/hooks'), and run 'gatehouse install --agent codex' again; nothing was changed")
	}
	if !changed && !trustChanged {
		fmt.Fprintf(env.Stdout, "%s: the Gatehouse hook is already installed and trusted\n", hooksFile)
		return nil
	}
	if changed {
		backup, err := writeWithBackup(hooksFile, old, merged)
		if err != nil {
			return err
		}
		if backup != "" {
			fmt.Fprintf(env.Stdout, "%s: backed up to %s\n", hooksFile, backup)
		}
		fmt.Fprintf(env.Stdout, "%s: Gatehouse hook installed (%s)\n", hooksFile, cmd)
	}
	if trustChanged {
		backup, err := writeWithBackup(configFile, oldConfig, config)
		if err != nil {
			return err
		}
		if backup != "" {
			fmt.Fprintf(env.Stdout, "%s: backed up to %s\n", configFile, backup)
		}
		fmt.Fprintf(env.Stdout, "%s: the hook is trusted (%s)\n", configFile, hash)
	}
	return nil
}

// checkTrust parses config as Codex will and checks that it trusts the
// hook at key by hash: the text edit must leave a valid file (a key the
// user defined another way, a dotted key say, would now be defined twice,
// and Codex would not start).
func checkTrust(config []byte, key, hash string) error {
	var c struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(string(config), &c); err != nil {
		return fmt.Errorf("recording the hook's trust would leave the file invalid: %v", err)
	}
	if got := c.Hooks.State[key].TrustedHash; got != hash {
		return fmt.Errorf("recording the hook's trust: hooks.state.%q.trusted_hash reads %q, not %q", key, got, hash)
	}
	return nil
}

// uninstallCodex removes Gatehouse's hook from Codex's hooks.json and its
// trust from config.toml.
func uninstallCodex(env *Env) error {
	dir, err := codexHome(env)
	if err != nil {
		return err
	}
	hooksFile, configFile := filepath.Join(dir, codex.HooksFile), filepath.Join(dir, codex.ConfigFile)
	var index int // the group's position, which named its trust entry
	removed, err := removeHookFile(env, hooksFile, func(old []byte) (out []byte, changed bool, err error) {
		out, changed, index, err = codex.RemoveHook(old)
		return out, changed, err
	})
	if err != nil || !removed {
		return err
	}
	oldConfig, err := readOptional(configFile)
	if err != nil {
		return err
	}
	if config, changed := codex.RemoveTrust(oldConfig, codex.TrustKey(hooksFile, index)); changed {
		if _, err := writeWithBackup(configFile, oldConfig, config); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s: the hook's trust removed\n", configFile)
	}
	return nil
}
