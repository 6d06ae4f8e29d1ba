package broker

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// The credential directory's parent, swapped with a link to another
// directory while leases are made and released, never gets a credential
// file, an execution directory or a removal into that directory; a link
// left where a dead process's directory was is removed, not followed.
func TestCredentialFilesFollowNoLink(t *testing.T) {
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "config"), []byte("Host *\n"), 0o600)
	os.MkdirAll(filepath.Join(victim, "999999999-old"), 0o700)
	os.WriteFile(filepath.Join(victim, "999999999-old", "keep"), []byte("k"), 0o600)
	before := hashDir(victim)

	base := t.TempDir()
	b := &Broker{Store: memStore(t), Dir: filepath.Join(base, "cred")}
	grant := &Grant{Files: map[string]string{"gcloud.json": "gcp_sa"}, IDs: []string{"gcp_sa"}}
	os.Mkdir(b.Dir, 0o700)
	// A dead process's directory, as a link into the victim.
	os.Symlink(filepath.Join(victim, "999999999-old"), filepath.Join(b.Dir, "999999999-old"))
	l, err := b.Lease(grant, LeaseOptions{ExecID: "first"})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, err := os.Lstat(filepath.Join(b.Dir, "999999999-old")); err == nil {
		t.Error("the dead process's link was not swept")
	}

	link := filepath.Join(base, "link")
	os.Symlink(victim, link)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, b.Dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
		}
	}()
	for i := range 2000 {
		if l, err := b.Lease(grant, LeaseOptions{ExecID: strconv.Itoa(i)}); err == nil {
			l.Release()
		}
	}
	stop.Store(true)
	wg.Wait()
	if after := hashDir(victim); after != before {
		t.Errorf("the linked directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func hashDir(dir string) string {
	var s string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var sum [32]byte
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sum = sha256.Sum256(b)
		}
		s += fmt.Sprintf("%s %v %x\n", p, d.Type(), sum[:6])
		return nil
	})
	return s
}
