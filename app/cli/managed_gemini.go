package cli

import (
	"fmt"
	"runtime"

	"github.com/gatehouse-dev/gatehouse/hook/gemini"
)

// managedGemini prints Gemini CLI's system settings with Gatehouse's hook,
// or with install merges the hook into the system settings file (path, or
// where Gemini reads it), keeping what else IT put there.
func managedGemini(env *Env, hook, path string, install bool) error {
	target := path
	if target == "" {
		target = gemini.ManagedPath(runtime.GOOS, env.Getenv)
	}
	if !install {
		env.Stdout.Write(gemini.RenderManaged(hook))
		fmt.Fprintf(env.Stderr, "gatehouse: Gemini CLI reads this from %s\n", target)
		return nil
	}
	old, err := readOptional(target)
	if err != nil {
		return err
	}
	data, _, err := gemini.MergeManaged(old, hook)
	if err != nil {
		return withHint(fmt.Errorf("%s: %w", target, err),
			"merge what 'gatehouse managed-settings --agent gemini' prints into it by hand; it was not changed")
	}
	return writeManaged(env, target, data)
}
