//go:build unix

package tickets

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The in-FIFO is open for a relay at once; a read waits (no end of file)
// until a relay writes or Release, and after a relay's request end of
// file means the relay closed it.
func TestIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"released", "relay"} {
		if err := MakeFIFOs(dir, name); err != nil {
			t.Fatal(err)
		}
	}

	in, err := OpenIn(dir, "released")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := in.Read(make([]byte, 1))
		got <- err
	}()
	in.Release()
	if err := <-got; err != io.EOF {
		t.Errorf("read after Release: %v, want EOF", err)
	}
	in.Close()

	in, err = OpenIn(dir, "relay")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	w, err := os.OpenFile(filepath.Join(dir, InName("relay")), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("a relay could not open the in-FIFO: %v", err)
	}
	w.WriteString("request\n")
	br := bufio.NewReader(in)
	if line, err := br.ReadString('\n'); line != "request\n" || err != nil {
		t.Fatalf("request %q %v", line, err)
	}
	in.Release()
	go func() { w.Close() }()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the relay closed: %v, want EOF", err)
	}
}
