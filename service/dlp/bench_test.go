package dlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchText returns about size bytes of mixed output: log lines, code,
// base64 and hex blobs, with the secrets and a few token-shaped strings
// sprinkled in.
func benchText(size int, secrets []Secret) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over lazy dog error warning info debug request response " +
		"func return if else for range struct interface package import const var type map chan go defer " +
		"GET POST /api/v1/items 200 404 500 ms bytes user id name value config path file line col")
	var b bytes.Buffer
	blob := make([]byte, 48)
	for b.Len() < size {
		switch r := rng.IntN(100); {
		case r < 70:
			n := 4 + rng.IntN(12)
			for i := range n {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			fmt.Fprintf(&b, " %d\n", rng.IntN(100000))
		case r < 80:
			for i := range blob {
				blob[i] = byte(rng.Uint32())
			}
			b.WriteString(base64.StdEncoding.EncodeToString(blob))
			b.WriteByte('\n')
		case r < 88:
			for i := range blob[:32] {
				blob[i] = byte(rng.Uint32())
			}
			b.WriteString(hex.EncodeToString(blob[:32]))
			b.WriteByte('\n')
		case r < 89 && len(secrets) > 0:
			s := secrets[rng.IntN(len(secrets))]
			b.WriteString("token: " + s.Value + "\n")
		case r < 90:
			b.WriteString("Authorization: Bearer abc123def456ghi789jkl012\n")
		default:
			b.WriteString(`{"level":"info","msg":"done","took":"12ms","path":"/home/user/src/project/main.go"}` + "\n")
		}
	}
	return b.Bytes()
}

func benchSecrets() []Secret {
	var out []Secret
	for i := range 10 {
		out = append(out, Secret{ID: fmt.Sprintf("cred_%d", i), Value: fmt.Sprintf("s3cr3t-%02d-%s", i, strings.Repeat("xYz9", 6+i))})
	}
	return out
}

// BenchmarkRedact compares the redactor (ten credentials and the
// built-in patterns) with a plain copy of the same bytes, 256 MiB per
// operation. The target is 300 MB/s.
func BenchmarkRedact(b *testing.B) {
	benchChunks(b, benchText(16<<20, benchSecrets()), 256<<20)
}

// copyWriter copies into a reused buffer, as the redactor does.
type copyWriter struct{ b *bytes.Buffer }

func (c *copyWriter) Write(p []byte) (int, error) {
	c.b.Reset()
	return c.b.Write(p)
}

// benchChunks writes total bytes of chunk, 256 KiB at a time, to the
// writers mk makes: a plain copy and the redactor (ten credentials and the
// built-in patterns).
func benchChunks(b *testing.B, chunk []byte, total int) {
	secrets := benchSecrets()
	r, err := New(secrets, nil)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, mk func() (io.Writer, func())) {
		b.SetBytes(int64(total))
		for b.Loop() {
			w, done := mk()
			for n := 0; n < total; n += 256 << 10 {
				off := n % len(chunk)
				end := min(off+256<<10, len(chunk))
				w.Write(chunk[off:end])
			}
			done()
		}
	}
	b.Run("copy", func(b *testing.B) {
		run(b, func() (io.Writer, func()) {
			var sink bytes.Buffer
			return &copyWriter{&sink}, func() {}
		})
	})
	b.Run("redact", func(b *testing.B) {
		run(b, func() (io.Writer, func()) {
			w := r.Writer(io.Discard)
			return w, func() { w.Close() }
		})
	})
}

// BenchmarkRedactZeros is output with nothing to find: NUL bytes, as
// head -c 1G /dev/zero prints them, 256 MiB per operation.
func BenchmarkRedactZeros(b *testing.B) {
	benchChunks(b, make([]byte, 1<<20), 256<<20)
}

// BenchmarkRedactBinary is random bytes, 256 MiB per operation.
func BenchmarkRedactBinary(b *testing.B) {
	chunk := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range chunk {
		chunk[i] = byte(rng.Uint32())
	}
	benchChunks(b, chunk, 256<<20)
}

// BenchmarkRedactSpaces is text made mostly of blanks and newlines, as
// aligned tables and indented listings are, 256 MiB per operation.
func BenchmarkRedactSpaces(b *testing.B) {
	var sb strings.Builder
	rng := rand.New(rand.NewPCG(7, 8))
	for sb.Len() < 4<<20 {
		sb.WriteString(strings.Repeat(" ", rng.IntN(40)))
		sb.WriteString(strings.Repeat("\t", rng.IntN(3)))
		if rng.IntN(4) == 0 {
			sb.WriteString("| - |")
		}
		sb.WriteByte('\n')
	}
	benchChunks(b, []byte(sb.String()), 256<<20)
}
