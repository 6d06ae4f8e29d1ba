package dlp

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// nul is a value that begins with NUL bytes: runs of NUL bytes may hold
// its anchor.
var nul = Secret{ID: "nul", Value: "\x00\x00\x00\x00k3y-after-nuls\x00"}

// fillers are texts the scan skips: they hold no anchor, but for the nul
// value's, in runs of NUL bytes.
var fillers = []string{"\x00", " ", "\n", "\xff", " \t", "\r\n", "\x00\x01\x02\x03\x04\x05\x06"}

// skipRedactor has values, the built-in patterns, a custom pattern with
// an anchor and, with unanchored, one without.
func skipRedactor(t testing.TB, unanchored bool) *Redactor {
	custom := []Pattern{{Name: "acme", Regexp: `ACME-[0-9]{6}`}}
	if unanchored {
		custom = append(custom, Pattern{Name: "any", Regexp: `[a-z]{3}-[0-9]{3}`})
	}
	return mustNew(t, append([]Secret{odd, plain, file, nul}, benchSecrets()...), custom)
}

// Every position whose four bytes are an anchor is returned by next,
// whatever comes before and after it and wherever it lies in a block.
func TestNextFindsEveryAnchor(t *testing.T) {
	t.Parallel()
	r := skipRedactor(t, true)
	a := &r.t.main
	var keys [][]byte
	for k := range a.m {
		keys = append(keys, binary.LittleEndian.AppendUint32(nil, k))
	}
	slices.SortFunc(keys, bytes.Compare)
	rng := rand.New(rand.NewPCG(11, 12))
	// A sample of them, with the one made of NUL bytes.
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	keys = append(keys[:min(len(keys), 60)], []byte("\x00\x00\x00\x00"))
	text := benchText(1<<12, benchSecrets())
	fill := func(n int, kind int) []byte {
		b := make([]byte, n)
		switch {
		case kind < len(fillers):
			for i := range b {
				f := fillers[kind]
				b[i] = f[i%len(f)]
			}
		case kind == len(fillers):
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
		default:
			off := rng.IntN(len(text) - n)
			copy(b, text[off:])
		}
		return b
	}
	check := func(buf []byte) {
		t.Helper()
		// The anchors, by the definition.
		var want []int
		for i := 0; i+4 <= len(buf); i++ {
			if len(a.m[binary.LittleEndian.Uint32(buf[i:])]) > 0 {
				want = append(want, i)
			}
		}
		// next from every start finds the first anchor at or after it (or
		// a filter hit before it).
		w := 0
		for i := 0; i <= len(buf); i++ {
			for w < len(want) && want[w] < i {
				w++
			}
			got := a.next(buf, i)
			switch {
			case w < len(want) && (got < i || got > want[w]):
				t.Fatalf("next(%q, %d) = %d, want at most %d", buf, i, got, want[w])
			case got >= 0 && (got < i || got+4 > len(buf) || !a.hit(binary.LittleEndian.Uint32(buf[got:]))):
				t.Fatalf("next(%q, %d) = %d: not a filter hit", buf, i, got)
			}
		}
	}
	for kind := 0; kind <= len(fillers)+1; kind++ {
		for _, k := range keys {
			for off := 0; off < 40; off++ {
				// A key alone, at every offset of a block, and near the end.
				buf := fill(off+4+rng.IntN(40), kind)
				copy(buf[off:], k)
				check(buf)
				check(buf[:off+4])
				// Two keys, overlapping or apart.
				k2 := keys[rng.IntN(len(keys))]
				if p := off + rng.IntN(8); p+4 <= len(buf) {
					copy(buf[p:], k2)
					check(buf)
				}
			}
		}
	}
}

// A value, its encodings and the patterns are found right after long runs
// of bytes the scan skips, at every offset, whole and streamed in chunks
// cut anywhere around them.
func TestSecretAfterRuns(t *testing.T) {
	t.Parallel()
	r := skipRedactor(t, true)
	type form struct {
		name, text, leak string // leak must not survive
	}
	var forms []form
	for _, s := range []Secret{plain, odd, nul} {
		v := []byte(s.Value)
		forms = append(forms,
			form{s.ID + " raw", s.Value, s.Value},
			form{s.ID + " base64", base64.StdEncoding.EncodeToString(v), base64Core(base64.RawStdEncoding, v, 0)},
			form{s.ID + " base64 wrapped", wrap(base64.StdEncoding.EncodeToString([]byte("xy"+s.Value)), 9), base64Core(base64.RawStdEncoding, v, 2)[4:16]},
			form{s.ID + " hex", hex.EncodeToString(v), hex.EncodeToString(v)},
			form{s.ID + " hex wrapped", wrap(hex.EncodeToString(v), 6), hex.EncodeToString(v)[6:18]},
			form{s.ID + " hex spaced", spaced(hex.EncodeToString(v)), spaced(hex.EncodeToString(v))},
			form{s.ID + " od", odWords(v, false), ""},
		)
	}
	gh := "ghp_" + strings.Repeat("Ab3", 12)
	forms = append(forms,
		form{"github token", gh, gh},
		form{"aws key", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
		form{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig", "eyJhbGciOiJIUzI1NiJ9"},
		form{"custom anchored", "ACME-123456", "ACME-123456"},
		form{"custom unanchored", "abc-123", "abc-123"},
	)
	for _, f := range fillers {
		for _, fm := range forms {
			for run := 0; run <= 34; run++ {
				pre := strings.Repeat(f, run)
				in := pre + fm.text + strings.Repeat(f, 5)
				want, wantN := r.RedactString(in)
				if wantN < 1 || fm.leak != "" && strings.Contains(want, fm.leak) ||
					strings.HasPrefix(fm.name, "od") && strings.Contains(want, fm.text) {
					t.Fatalf("%s after %d × %q: %q (%d redactions)", fm.name, run, f, want, wantN)
				}
				for _, cut := range []int{len(pre) - 1, len(pre), len(pre) + 2, len(pre) + len(fm.text)/2, len(pre) + len(fm.text) - 1} {
					if cut < 0 {
						continue
					}
					got, n := streamed(r, [][]byte{[]byte(in[:cut]), []byte(in[cut:])})
					if got != want || n != wantN {
						t.Fatalf("%s after %d × %q, split at %d:\n got %q (%d)\nwant %q (%d)", fm.name, run, f, cut, got, n, want, wantN)
					}
				}
			}
		}
	}
}

// Large writes of skipped bytes with the value across their boundaries,
// as a command's output arrives.
func TestSecretAcrossLargeWrites(t *testing.T) {
	t.Parallel()
	// The pattern without an anchor is searched for everywhere, slowly;
	// TestSecretAfterRuns has it.
	r := skipRedactor(t, false)
	const chunk = 4 << 10
	for _, f := range fillers {
		for _, s := range []Secret{plain, nul} {
			for _, enc := range []string{s.Value, base64.StdEncoding.EncodeToString([]byte(s.Value)), wrap(hex.EncodeToString([]byte(s.Value)), 10)} {
				for d := -min(len(enc)+1, 20); d <= 9; d++ {
					pos := 2*chunk + d // where the value begins
					b := bytes.Repeat([]byte(f), 3*chunk/len(f)+1)[:3*chunk]
					b = append(b[:pos:pos], append([]byte(enc), b[pos:]...)...)
					var chunks [][]byte
					for off := 0; off < len(b); off += chunk {
						chunks = append(chunks, b[off:min(off+chunk, len(b))])
					}
					want, wantN := r.Redact(b)
					got, n := streamed(r, chunks)
					if wantN < 1 || got != string(want) || n != wantN {
						t.Fatalf("%s encoded %q after %q × %d: streamed %d redactions, whole %d; same output %v", s.ID, enc, f, pos, n, wantN, got == string(want))
					}
				}
			}
		}
	}
}

// Write scans what it is given where it is, when nothing is held back: it
// leaves it as it was.
func TestWriteLeavesInputAlone(t *testing.T) {
	t.Parallel()
	r := skipRedactor(t, false)
	in := []byte(strings.Join(chunkInputs(), "\x00\x00") + "token: " + plain.Value[:12])
	orig := bytes.Clone(in)
	var out bytes.Buffer
	w := r.Writer(&out)
	for off := 0; off < len(in); off += 100 {
		w.Write(in[off:min(off+100, len(in))])
	}
	w.Write(in)
	w.Close()
	if !bytes.Equal(in, orig) {
		t.Fatal("Write changed its input")
	}
	want, _ := r.Redact(append(bytes.Clone(in), in...))
	if out.String() != string(want) {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}
