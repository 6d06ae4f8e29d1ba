package main

import "testing"

func TestName(t *testing.T) {
	if got := name(nil); got != "world" {
		t.Fatalf("name(nil) = %q", got)
	}
	if got := name([]string{"gopher"}); got != "gopher" {
		t.Fatalf("name = %q", got)
	}
}
