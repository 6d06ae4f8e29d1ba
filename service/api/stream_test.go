package api

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestStreamRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf, nil)
	big := strings.Repeat("a", MaxFramePayload+10) // split in two frames
	fw.Stdout().Write([]byte(big))
	fw.Stderr().Write([]byte("err\xff"))
	fw.Stdout().Write(nil)
	code := 3
	fw.End(&End{Exit: 3, Result: &Result{ExitCode: &code}})
	var out, errb bytes.Buffer
	end, err := ReadStream(bytes.NewReader(buf.Bytes()), &out, &errb)
	if err != nil || end.Exit != 3 || *end.Result.ExitCode != 3 {
		t.Fatalf("end %+v err %v", end, err)
	}
	if out.String() != big || errb.String() != "err\xff" {
		t.Errorf("stdout %d bytes, stderr %q", out.Len(), errb.String())
	}
	// Cut anywhere before the end frame: ErrNoEnd.
	for _, n := range []int{0, 3, 5 + 100, buf.Len() - 1} {
		if _, err := ReadStream(bytes.NewReader(buf.Bytes()[:n]), &out, &errb); !errors.Is(err, ErrNoEnd) {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	if _, err := ReadStream(strings.NewReader("X\x00\x00\x00\x00"), &out, &errb); err == nil {
		t.Error("unknown frame type accepted")
	}
}
