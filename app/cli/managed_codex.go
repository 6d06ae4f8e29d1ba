package cli

import (
	"bytes"
	"fmt"
	"runtime"

	"github.com/BurntSushi/toml"

	"github.com/gatehouse-dev/gatehouse/hook/codex"
)

// codexRequirementsPath is where Codex reads the requirements IT manages
// (codex-rs/config: /etc/codex/requirements.toml on Unix).
const codexRequirementsPath = "/etc/codex/requirements.toml"

// managedCodex prints, or with install writes, the managed hooks of
// Codex's requirements.toml: Gatehouse's PreToolUse hook running hook,
// which Codex runs without a trust step, and managed hooks only. A
// requirements.toml that holds more than Gatehouse's rendering is not
// replaced: IT merges the lines into it.
func managedCodex(env *Env, hook, path string, install bool) error {
	data := codex.RenderManaged(codex.HookCommand(hook), true)
	target := path
	if target == "" {
		if runtime.GOOS == "windows" {
			return usagef("managed-settings --agent codex: --path names the requirements.toml to write on Windows")
		}
		target = codexRequirementsPath
	}
	if !install {
		env.Stdout.Write(data)
		fmt.Fprintf(env.Stderr, "gatehouse: Codex reads this from %s\n", target)
		return nil
	}
	old, err := readOptional(target)
	if err != nil {
		return err
	}
	if old != nil && !bytes.Equal(old, data) && !bytes.HasPrefix(old, data[:bytes.IndexByte(data, '\n')+1]) {
		var reqs map[string]any
		if _, err := toml.Decode(string(old), &reqs); err != nil || len(reqs) > 0 {
			return withHint(fmt.Errorf("%s holds requirements of its own; not replaced", target),
				"merge the lines 'gatehouse managed-settings --agent codex' prints into it")
		}
	}
	return writeManaged(env, target, data)
}
