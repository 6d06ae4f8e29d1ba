package cli

import "github.com/gatehouse-dev/gatehouse/hook/gemini"

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
	cmd := gemini.HookCommand(hookExe(exe))
	return mergeFile(env, file, "fix the file (a settings file with comments is left to you: add the hook 'gatehouse managed-settings --agent gemini' prints) and run 'gatehouse install --agent gemini' again; nothing was changed", func(old []byte) ([]byte, bool, error) {
		return gemini.MergeHook(old, cmd)
	}, "the Gatehouse hook is already installed", "Gatehouse hook installed ("+cmd+")")
}

// uninstallGemini removes Gatehouse's hook from Gemini CLI's user
// settings.
func uninstallGemini(env *Env) error {
	file, err := geminiSettingsPath(env)
	if err != nil {
		return err
	}
	_, err = removeHookFile(env, file, gemini.RemoveHook)
	return err
}
