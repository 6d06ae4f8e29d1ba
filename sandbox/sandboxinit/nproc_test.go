package sandboxinit

import (
	"slices"
	"testing"
)

func TestPerUserNamespace(t *testing.T) {
	t.Parallel()
	for release, want := range map[string]bool{
		"6.18.44-fc-v1045":   true,
		"5.14.0-362.el9":     true,
		"5.15.0-91-generic":  true,
		"5.13.19":            false,
		"5.10.0-28-amd64":    false,
		"4.19.0":             false,
		"10.0":               true,
		"5.14+":              true,
		"":                   false,
		"garbage":            false,
		"6":                  false,
		"3.10.0-1160.el7":    false,
		"6.1.0-18-cloud-arm": true,
	} {
		if got := PerUserNamespace(release); got != want {
			t.Errorf("PerUserNamespace(%q) = %v, want %v", release, got, want)
		}
	}
}

func TestNProcLimit(t *testing.T) {
	t.Parallel()
	const unlimited = ^uint64(0)
	for _, c := range []struct {
		n, base int64
		hard    uint64
		want    uint64
	}{
		{1024, 0, unlimited, 1024},
		{1024, 300, unlimited, 1324},
		{1024, 300, 1000, 1000}, // the hard limit cannot be raised
		{0, 300, 5000, 5000},    // no budget: nothing lowered
		{16, -1, 5000, 5000},
	} {
		if got := nprocLimit(c.n, c.base, c.hard); got != c.want {
			t.Errorf("nprocLimit(%d, %d, %d) = %d, want %d", c.n, c.base, c.hard, got, c.want)
		}
	}
}

func TestExecArgsNProc(t *testing.T) {
	t.Parallel()
	p := &Stage1Spec{BuildID: "b1", Shell: "/bin/bash", Argv: []string{"/bin/bash", "-c", "true"}, Seccomp: "off", NProc: 64, NProcBase: 300}
	want := []string{"sandbox-exec", "--build-id", "b1", "--seccomp", "off", "--fsize", "0", "--nproc", "64", "--nproc-base", "300", "--", "/bin/bash", "-c", "true"}
	if got := ExecArgs(p); !slices.Equal(got, want) {
		t.Errorf("ExecArgs = %q, want %q", got, want)
	}
	p.NProc = 0
	if got := ExecArgs(p); slices.Contains(got, "--nproc") {
		t.Errorf("ExecArgs without a budget = %q", got)
	}
}
