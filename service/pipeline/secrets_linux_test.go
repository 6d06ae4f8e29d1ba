package pipeline

// Credential stores in the real sandbox: one secret planted in every store
// of sandbox.SecretStores, then read from inside; and secrets kept outside
// the stores that a hidden store leads to.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// readAll is a command that prints whatever it can read of paths: a file's
// content, a directory's listing and the files below it.
func readAll(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "cat %q 2>/dev/null; ls -A %q 2>/dev/null; find %q -type f -exec cat {} + 2>/dev/null\n", p, p, p)
	}
	b.WriteString("exit 0\n")
	return b.String()
}

func TestSecretStoresHidden(t *testing.T) {
	t.Parallel()
	const secret = "STORE-SECRET-8842"
	// Each store as a file and, in a second home, as a directory holding
	// one: what a tool keeps there does not matter.
	for _, asDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("dir=%v", asDir), func(t *testing.T) {
			t.Parallel()
			f := bwrapFixture(t, nil)
			var paths []string
			for _, rel := range sandbox.SecretStores {
				p := filepath.Join("home", rel)
				if asDir {
					p = filepath.Join(p, "planted")
				}
				paths = append(paths, f.write(p, secret+" "+rel+"\n"))
			}
			o := f.run(readAll(paths))
			if out := o.Result.Stdout + o.Result.Stderr; strings.Contains(out, secret) {
				var leaked []string
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, secret) {
						leaked = append(leaked, line)
					}
				}
				t.Errorf("readable in the sandbox:\n%s", strings.Join(leaked, "\n"))
			}
		})
	}
}

func TestSecretsLinkedFromStores(t *testing.T) {
	t.Parallel()
	const secret = "LINKED-SECRET-5531"
	f := bwrapFixture(t, nil)
	kept := f.write("home/keys/id_work", secret+" kept elsewhere\n")
	inWorkspace := f.write("home/src/.keys/id_ws", secret+" kept in the workspace\n")
	deploy := f.write("home/deploy/key", secret+" named by ssh config\n")
	included := f.write("opt-keys/included", secret+" named by an included config\n")
	dotfile := f.write("home/dotfiles/netrc", secret+" a hidden entry that is a link\n")
	for link, target := range map[string]string{
		"home/.ssh/id_work":  kept,
		"home/.ssh/id_ws":    inWorkspace,
		"home/.aws/sso/link": filepath.Dir(kept),
		"home/.netrc":        dotfile,
	} {
		symlinkAt(t, target, filepath.Join(f.dir, link))
	}
	f.write("home/.ssh/config", "Host *\n  IdentityFile ~/deploy/key\nInclude extra.conf\n")
	f.write("home/.ssh/extra.conf", fmt.Sprintf("Host x\n  IdentityFile %s\n", included))

	o := f.run(readAll([]string{kept, inWorkspace, deploy, included, dotfile}))
	if out := o.Result.Stdout + o.Result.Stderr; strings.Contains(out, secret) {
		t.Errorf("a secret a store leads to is readable in the sandbox: %q", out)
	}
	// What the stores do not lead to stays readable.
	plain := f.write("home/src/notes.txt", "ordinary\n")
	if o := f.run("cat " + plain); o.Result.Stdout != "ordinary\n" {
		t.Errorf("an ordinary workspace file reads %q (stderr %q, exit %d)", o.Result.Stdout, o.Result.Stderr, exitOf(o))
	}
}

// symlinkAt makes link (and its parent directories) point at target.
func symlinkAt(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
