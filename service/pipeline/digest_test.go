package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

func TestDigestMatchesSHA256(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 1, digestChunk - 1, digestChunk, digestChunk + 1, 5*digestChunk + 17, (digestQueue + 3) * digestChunk} {
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		d := newDigest()
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(3*digestChunk/2))
			if k, err := d.Write(rest[:n]); k != n || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", k, err, n)
			}
			rest = rest[n:]
		}
		want := sha256.Sum256(data)
		if got := d.Hex(); got != hex.EncodeToString(want[:]) {
			t.Errorf("%d bytes: got %s, want %x", total, got, want)
		}
		d.Close() // a second Close is harmless
		if got := d.Hex(); got != hex.EncodeToString(want[:]) {
			t.Errorf("%d bytes: second Hex got %s", total, got)
		}
	}
}
