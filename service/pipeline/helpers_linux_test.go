package pipeline

import (
	"errors"
	"os"
	"testing"
)

func denial(err error) *Denial {
	var d *Denial
	if errors.As(err, &d) {
		return d
	}
	return nil
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
