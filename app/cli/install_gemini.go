package cli

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/hook/gemini"
)

// geminiSettingsPath is Gemini CLI's user settings file,
// ~/.gemini/settings.json.
func geminiSettingsPath(env *Env) (string, error) {
	home, err := homeDir(env)
	if err != nil {
		return "", err
	}
	return gemini.UserPath(home), nil
}

// installGemini merges Gatehouse's BeforeTool hook into Gemini CLI's user
// settings. Gemini runs it without a trust step (in a folder it trusts).
func installGemini(env *Env, exe string) error {
	file, err := geminiSettingsPath(env)
	if err != nil {
		return err
	}
	old, err := readOptional(file)
	if err != nil {
		return err
	}
	cmd := gemini.HookCommand(hookExe(exe))
	merged, changed, err := gemini.MergeHook(old, cmd)
	if err != nil {
		return withHint(fmt.Errorf("%s: %w", file, err), "fix the file (a settings file with comments is left to you: add the hook 'gatehouse managed-settings --agent gemini' prints) and run 'gatehouse install --agent gemini' again; nothing was changed")
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s: the Gatehouse hook is already installed\n", file)
		return nil
	}
	backup, err := writeWithBackup(file, old, merged)
	if err != nil {
		return err
	}
	if backup != "" {
		fmt.Fprintf(env.Stdout, "%s: backed up to %s\n", file, backup)
	}
	fmt.Fprintf(env.Stdout, "%s: Gatehouse hook installed (%s)\n", file, cmd)
	return nil
}

// uninstallGemini removes Gatehouse's hook from Gemini CLI's user
// settings.
func uninstallGemini(env *Env) error {
	file, err := geminiSettingsPath(env)
	if err != nil {
		return err
	}
	old, err := readOptional(file)
	if err != nil {
		return err
	}
	out, changed, err := gemini.RemoveHook(old)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s: no Gatehouse hook to remove\n", file)
		return nil
	}
	backup, err := writeWithBackup(file, old, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: Gatehouse hook removed (backup: %s)\n", file, backup)
	return nil
}
