package version

import "testing"

// Without -ldflags -X (a test binary) the toolchain's stamp stands in:
// "devel" for the version, and the VCS revision and time only when the
// build recorded them.
func TestGetFallback(t *testing.T) {
	got := Get()
	if got.Version != "devel" {
		t.Errorf("version %q, want devel", got.Version)
	}
	if got.Commit == "" || got.Date == "" {
		t.Errorf("empty parts: %+v", got)
	}
}

// Values the linker set win over the fallback, part by part.
func TestGetLinked(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	version, commit, date = "1.2.3", "abc123", "2026-01-02T03:04:05Z"
	got := Get()
	if got != (Info{Version: "1.2.3", Commit: "abc123", Date: "2026-01-02T03:04:05Z"}) {
		t.Errorf("got %+v", got)
	}
	if s := got.String(); s != "gatehouse 1.2.3 (commit abc123, built 2026-01-02T03:04:05Z)" {
		t.Errorf("String: %q", s)
	}
	version = ""
	if got := Get(); got.Version != "devel" || got.Commit != "abc123" {
		t.Errorf("a part not linked: %+v", got)
	}
}
