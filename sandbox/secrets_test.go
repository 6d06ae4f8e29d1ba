package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestDenyReadStores(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	got := DenyRead(home, []string{"/etc/gatehouse-extra/"})
	for _, rel := range []string{
		".ssh", ".config/gh", ".git-credentials", ".npmrc", ".pypirc",
		".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json",
		".azure", ".config/doctl", ".vault-token", ".pgpass", ".my.cnf",
		".local/share/keyrings", ".password-store", ".mozilla",
		".config/google-chrome",
	} {
		if !slices.Contains(got, filepath.Join(home, rel)) {
			t.Errorf("DenyRead lacks ~/%s", rel)
		}
	}
	if !slices.Contains(got, "/etc/gatehouse-extra") {
		t.Errorf("DenyRead lacks the extra entry, cleaned: %q", got)
	}
}

func TestDenyReadFollowsLinks(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	keep := filepath.Join(home, "keys", "id_work")
	write(t, keep, "PRIVATE")
	symlink(t, keep, filepath.Join(home, ".ssh", "id_work"))
	// A link deeper in a hidden directory, and one to a directory.
	write(t, filepath.Join(home, "vault", "tokens", "a"), "x")
	symlink(t, filepath.Join(home, "vault", "tokens"), filepath.Join(home, ".aws", "sso", "cache"))
	// A hidden entry that is itself a link.
	write(t, filepath.Join(home, "dotfiles", "netrc"), "machine x password y")
	symlink(t, filepath.Join(home, "dotfiles", "netrc"), filepath.Join(home, ".netrc"))
	// A dangling link and a link to something already hidden.
	symlink(t, filepath.Join(home, "gone"), filepath.Join(home, ".ssh", "dangling"))
	symlink(t, filepath.Join(home, ".ssh", "id_work"), filepath.Join(home, ".gnupg", "again"))

	got := DenyRead(home, nil)
	for _, want := range []string{keep, filepath.Join(home, "vault", "tokens"), filepath.Join(home, "dotfiles", "netrc")} {
		if !slices.Contains(got, want) {
			t.Errorf("DenyRead lacks the link target %s", want)
		}
	}
	if slices.Contains(got, filepath.Join(home, "gone")) {
		t.Errorf("DenyRead lists a dangling link's target")
	}
	n := 0
	for _, p := range got {
		if p == keep {
			n++
		}
	}
	if n != 1 {
		t.Errorf("target listed %d times, want once", n)
	}
}

func TestDenyReadSSHConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	write(t, filepath.Join(home, ".ssh", "config"), `
# comment
Host work
    IdentityFile ~/keys/work_ed25519
  identityfile=%d/keys/eq
Host *
	IdentityFile "/opt/keys/quoted key"
	CertificateFile keys/relative-cert.pub
	IdentityFile ~/.ssh/id_%h
	IdentityFile none
Include conf.d/*.conf
`)
	write(t, filepath.Join(home, ".ssh", "conf.d", "a.conf"), "IdentityFile /srv/included\n")
	got := DenyRead(home, nil)
	for _, want := range []string{
		filepath.Join(home, "keys", "work_ed25519"),
		filepath.Join(home, "keys", "eq"),
		"/opt/keys/quoted key",
		filepath.Join(home, "keys", "relative-cert.pub"),
		"/srv/included",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("DenyRead lacks %s, named in ~/.ssh/config", want)
		}
	}
	for _, p := range got {
		if filepath.Base(p) == "id_%h" || filepath.Base(p) == "none" {
			t.Errorf("DenyRead lists %s, which names no single file", p)
		}
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{"/app", "/app", true},
		{"/app/x", "/app", true},
		{"/app_backup", "/app", false},
		{"/x", "/", true},
		{"/", "/app", false},
	} {
		if got := Within(tc.p, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}

// BenchmarkDenyRead is the per-execution cost of the list: a home with a
// few stores, a browser profile, and an ssh config.
func BenchmarkDenyRead(b *testing.B) {
	home := b.TempDir()
	for i := range 10 {
		os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
		os.WriteFile(filepath.Join(home, ".ssh", "key"+string(rune('a'+i))), []byte("k"), 0o600)
	}
	for i := range 500 {
		d := filepath.Join(home, ".mozilla", "firefox", "p.default", "storage", string(rune('a'+i%26)))
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, "f"+string(rune('a'+i/26))), []byte("x"), 0o600)
	}
	os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte("Host *\n  IdentityFile ~/.ssh/keya\n"), 0o600)
	os.MkdirAll(filepath.Join(home, ".aws"), 0o700)
	os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("x"), 0o600)
	for b.Loop() {
		DenyRead(home, nil)
	}
}
