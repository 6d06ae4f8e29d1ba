package sandbox

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"
)

func TestPumpBuf(t *testing.T) {
	t.Parallel()
	small := make([]byte, pumpFirstBufSize)
	if got := pumpBuf(small, 10); len(got) != pumpFirstBufSize {
		t.Errorf("after a short read: got %d bytes, want %d", len(got), pumpFirstBufSize)
	}
	large := pumpBuf(small, pumpFirstBufSize)
	if len(large) != pumpBufSize {
		t.Errorf("after a full read: got %d bytes, want %d", len(large), pumpBufSize)
	}
	if got := pumpBuf(large, pumpBufSize); len(got) != pumpBufSize {
		t.Errorf("after a full read of the large buffer: got %d bytes, want %d", len(got), pumpBufSize)
	}
}

// A pump delivers every byte in order, across the move to the large
// buffer.
func TestPumpDeliversAll(t *testing.T) {
	t.Parallel()
	want := make([]byte, 3*pumpBufSize+12345)
	rand.Read(want)
	var got bytes.Buffer
	p, err := NewPump(&got)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for b := want; len(b) > 0; {
			n := min(len(b), 100_000)
			if _, err := p.W.Write(b[:n]); err != nil {
				t.Error(err)
				break
			}
			b = b[n:]
		}
		p.W.Close()
	}()
	p.Wait(10 * time.Second)
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("got %d bytes, want the %d written", got.Len(), len(want))
	}
}
