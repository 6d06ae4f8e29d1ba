// Command gatehouse-bench measures the governed shell against the bare
// tools it is built on, in one run, and prints medians and ratios:
//
//   - gatehouse exec -- true
//   - bare bwrap with the same arguments running bash -c true
//   - bash -c true
//   - the binary's own start (gatehouse help) and the init's
//     (gatehouse-init build-id), which an in-process command pays
//   - 1 GiB of printable lines through gatehouse exec against plain bash
//   - gatehouse exec -- true through a running service, with the warm
//     pool and without, and in-process, against bare bwrap; 32 at once;
//     the binary's start against the small client's (service.go)
//   - the hook process and the relay of a routed true against a running
//     service, against an empty static Go program's start (clients.go)
//
// With -egress it measures the egress path instead (egress.go): a 1 GiB
// download from a host-loopback server through the bridge and proxy
// against curl on the host, and the time to first byte of a small HTTPS
// request through the proxy against direct.
//
// It writes a scratch configuration (workspace under /var/tmp, output cap
// raised so that the throughput run streams every byte) and removes it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	gh := flag.String("gatehouse", "bin/gatehouse", "gatehouse binary")
	n := flag.Int("n", 40, "runs per start-up measurement")
	bytesN := flag.Int64("bytes", 1<<30, "bytes of stdout for the throughput runs")
	rounds := flag.Int("rounds", 3, "throughput runs per side")
	egress := flag.Bool("egress", false, "measure egress instead: a download through the bridge and proxy against direct, and the added time to first byte")
	clients := flag.Bool("clients", false, "measure only the clients: the hook process and the relay against an empty static Go program")
	svc := flag.Bool("service", false, "measure only gatehouse exec through a running service (warm pool on and off) and in-process against bare bwrap, and 32 at once")
	small := flag.String("hook", "", "the gatehouse-hook program (default: next to the gatehouse binary, when there is one)")
	flag.Parse()
	// Every measurement runs gatehouse from directories of its own.
	if abs, err := filepath.Abs(*gh); err == nil {
		*gh = abs
	}
	if *small == "" {
		if p := filepath.Join(filepath.Dir(*gh), "gatehouse-hook"); fileExists(p) {
			*small = p
		}
	}
	measure := func(gh string, nbytes int64, rounds, n int) error {
		if err := run(gh, nbytes, rounds, n); err != nil {
			return err
		}
		if err := runService(gh, *small, n); err != nil {
			return err
		}
		return runClients(gh, *small, n)
	}
	switch {
	case *egress:
		measure = runEgress
	case *svc:
		measure = func(gh string, _ int64, _, n int) error { return runService(gh, *small, n) }
	case *clients:
		measure = func(gh string, _ int64, _, n int) error { return runClients(gh, *small, n) }
	}
	if err := measure(*gh, *bytesN, *rounds, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse-bench:", err)
		os.Exit(1)
	}
}

func run(gh string, nbytes int64, rounds, n int) error {
	dir, err := os.MkdirTemp("/var/tmp", "gatehouse-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	// Both sides get the same mounts: the write-deny directories exist, so
	// gatehouse binds them as the bare bwrap run does.
	for _, d := range []string{".vscode", ".idea", ".claude"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("exec:\n  default_cwd: %s\n", ws)), 0o644)
	env := append(os.Environ(), "GATEHOUSE_CONFIG="+cfg)
	// For the throughput run that delivers every byte, the output cap is
	// raised above the size written.
	bigCfg := filepath.Join(dir, "big.yaml")
	os.WriteFile(bigCfg, []byte(fmt.Sprintf("exec:\n  default_cwd: %s\n  limits:\n    output_max_bytes: 4GiB\n", ws)), 0o644)
	bigEnv := append(os.Environ(), "GATEHOUSE_CONFIG="+bigCfg)

	bare, err := bareBwrap(gh, env, "--cwd", ws)
	if err != nil {
		return err
	}

	cases := []struct {
		name string
		argv []string
	}{
		{"gatehouse exec -- true", []string{gh, "exec", "--cwd", ws, "--", "true"}},
		{"bwrap (same binds) bash -c true", bare},
		{"bash -c true", []string{"/bin/bash", "--noprofile", "--norc", "-c", "true"}},
		{"gatehouse help (binary start)", []string{gh, "help"}},
		// The init inside the sandbox is its own small program.
		{"gatehouse-init build-id (init start)", []string{filepath.Join(filepath.Dir(gh), "gatehouse-init"), "build-id"}},
	}
	med := make([]time.Duration, len(cases))
	// Interleave the cases so that drift on the machine hits all alike.
	samples := make([][]time.Duration, len(cases))
	for i := 0; i < n; i++ {
		for c, tc := range cases {
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			cmd.Env, cmd.Dir = env, ws
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: %v: %s", tc.name, err, stderr.String())
			}
			samples[c] = append(samples[c], time.Since(t0))
		}
	}
	fmt.Printf("start-up, %d runs each (median, min, max):\n", n)
	for c, tc := range cases {
		med[c] = median(samples[c])
		fmt.Printf("  %-34s %8.2f ms  (%.2f .. %.2f)\n", tc.name, ms(med[c]), ms(minOf(samples[c])), ms(maxOf(samples[c])))
	}
	fmt.Printf("  ratio gatehouse / bare bwrap: %.2fx (in-process, no service; target <= 2.5x)\n", float64(med[0])/float64(med[1]))
	fmt.Printf("  ratio bare bwrap / bash:      %.2fx\n", float64(med[1])/float64(med[2]))
	// In process, a command starts the CLI and, inside the sandbox, the
	// init on top of what bare bwrap does: no work at all could be faster
	// than this.
	floor := med[1] + med[3] + med[4]
	fmt.Printf("  floor, bare bwrap + the CLI's start + the init's start: %.2f ms (%.2fx bare bwrap)\n", ms(floor), float64(floor)/float64(med[1]))

	// Printable lines, as most output is: the caller's copy escapes
	// control bytes (a NUL becomes the four bytes \x00), so /dev/zero
	// would measure the escaping of four times the bytes.
	gen := fmt.Sprintf("yes abcdefghijklmnopqrstuvwxyz | head -c %d", nbytes)
	tput := []struct {
		name string
		argv []string
		env  []string
		want int64
	}{
		{"gatehouse exec, all delivered", []string{gh, "exec", "--cwd", ws, "--", gen}, bigEnv, nbytes},
		{"gatehouse exec, default 1MiB cap", []string{gh, "exec", "--cwd", ws, "--", gen}, env, 1 << 20},
		{"bash", []string{"/bin/bash", "--noprofile", "--norc", "-c", gen}, env, nbytes},
	}
	rates := make([][]float64, len(tput))
	for r := 0; r < rounds; r++ {
		for i, tc := range tput {
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			cmd.Env, cmd.Dir = tc.env, ws
			pipe, err := cmd.StdoutPipe()
			if err != nil {
				return err
			}
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				return err
			}
			got, _ := io.CopyBuffer(io.Discard, pipe, make([]byte, 1<<20))
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("%s: %v", tc.name, err)
			}
			if got < tc.want {
				return fmt.Errorf("%s: got %d bytes, want %d", tc.name, got, tc.want)
			}
			rates[i] = append(rates[i], float64(nbytes)/(1<<20)/time.Since(t0).Seconds())
		}
	}
	fmt.Printf("stdout throughput, %d MiB written, %d runs each (median):\n", nbytes>>20, rounds)
	bash := medianF(rates[len(rates)-1])
	for i, tc := range tput {
		m := medianF(rates[i])
		fmt.Printf("  %-34s %8.0f MiB/s  (%.2fx bash)\n", tc.name, m, m/bash)
	}
	return nil
}

// bareBwrap is the argv of bwrap with exactly the arguments gatehouse,
// run with env, would pass for a command (gatehouse exec's
// --print-bwrap-args, with execArgs before the command), with bash -c true
// in place of Gatehouse's init.
func bareBwrap(gh string, env []string, execArgs ...string) ([]string, error) {
	plan := exec.Command(gh, append(append([]string{"exec", "--print-bwrap-args"}, execArgs...), "--", "true")...)
	plan.Env = env
	out, err := plan.Output()
	if err != nil {
		return nil, fmt.Errorf("getting the bwrap arguments: %v", err)
	}
	bwrapPath, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, err
	}
	bargs := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	for i, a := range bargs {
		if a == "--" {
			bargs = append(bargs[:i+1:i+1], "/bin/bash", "--noprofile", "--norc", "-c", "true")
			break
		}
	}
	return append([]string{bwrapPath}, bargs...), nil
}

// scratch makes a directory under /var/tmp named after prefix, with an
// empty static Go program built in it; cleanup removes both.
func scratch(prefix string) (dir, empty string, cleanup func(), err error) {
	if dir, err = os.MkdirTemp("/var/tmp", prefix); err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if empty, err = emptyProgram(dir); err != nil {
		cleanup()
		return "", "", nil, err
	}
	return dir, empty, cleanup, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianF(d []float64) float64 {
	s := append([]float64{}, d...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

func maxOf(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
