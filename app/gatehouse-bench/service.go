package main

// gatehouse exec through a running service, with the warm pool and
// without, and in-process, against bare bwrap with the same binds running
// bash -c true; and 32 concurrent executions through the service, pool on
// and off. Beside them, the same warm call sent by the full program
// (gatehouse-core) instead of the front program (gatehouse), and the starts
// of the full program and of the small client (gatehouse-hook), so that
// the run says what the front program takes off a warm call and what is
// left; and the same warm call sent from this running process (no
// program's start), which parts the call's time between the client's
// program and the service with its sandbox.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/app/cli/execface"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/svccall"
)

func runService(gh, small string, n int) error {
	dir, empty, cleanup, err := scratch("gatehouse-bench-service-")
	if err != nil {
		return err
	}
	defer cleanup()
	warm, err := startWorld(gh, filepath.Join(dir, "warm"), "exec:\n  sandbox:\n    warm_pool: 2\n  limits:\n    max_concurrent: 32\n")
	if err != nil {
		return err
	}
	defer warm.stop()
	fresh, err := startWorld(gh, filepath.Join(dir, "fresh"), "exec:\n  sandbox:\n    warm_pool: 0\n  limits:\n    max_concurrent: 32\n")
	if err != nil {
		return err
	}
	defer fresh.stop()
	// In-process: the same user with no service to find.
	noRuntime := filepath.Join(dir, "no-service")
	os.MkdirAll(noRuntime, 0o700)
	inproc := append(append([]string{}, fresh.env...), "XDG_RUNTIME_DIR="+noRuntime)

	bare, err := bareBwrap(gh, inproc, "--cwd", fresh.ws)
	if err != nil {
		return err
	}
	execIn := func(w *clientWorld) []string { return []string{gh, "exec", "--cwd", w.ws, "--", "true"} }
	type benchCase struct {
		name string
		argv []string
		env  []string
		// status is the exit status the case ends with: the small
		// client, given nothing to do, prints its usage and exits 2.
		status int
		// call, when set, is the case instead of a program: it runs in
		// this process.
		call func() error
	}
	cases := []benchCase{
		{"bare bwrap (same binds) bash -c true", bare, inproc, 0, nil},
		{"gatehouse exec, service, warm pool", execIn(warm), warm.env, 0, nil},
		{"gatehouse exec, service, pool off", execIn(fresh), fresh.env, 0, nil},
		{"gatehouse exec, in-process", execIn(fresh), inproc, 0, nil},
		{"empty static Go program", []string{empty}, inproc, 0, nil},
		{"gatehouse help (binary start)", []string{gh, "help"}, inproc, 0, nil},
	}
	// The full program beside the front program (make build's layout).
	core := filepath.Join(filepath.Dir(gh), "gatehouse-core")
	if _, err := os.Stat(core); err == nil {
		cases[5] = benchCase{"gatehouse-core help (full program start)", []string{core, "help"}, inproc, 0, nil}
		cases = append(cases, benchCase{"gatehouse-core exec, service, warm pool", append([]string{core}, execIn(warm)[1:]...), warm.env, 0, nil})
	} else {
		core = ""
	}
	if small != "" {
		cases = append(cases, benchCase{name: "gatehouse-hook (small client start)", argv: []string{small}, env: inproc, status: 2})
	}
	// The front's warm call as this process sends it: the same request
	// (execface.Request) through the same service call (svccall.Run).
	fromHere := len(cases)
	cases = append(cases, benchCase{name: "the warm call sent from this process", call: func() error {
		req, err := execface.Request("exec", []string{"true"}, warm.ws, "")
		if err != nil {
			return err
		}
		end, ok := svccall.Run(context.Background(), localapi.NewClient(warm.socket()), svccall.Call{Request: req, Stdout: io.Discard, Stderr: io.Discard})
		switch {
		case !ok:
			return fmt.Errorf("no service answered")
		case end.Exit != 0:
			return fmt.Errorf("exit %d: %+v", end.Exit, end.Error)
		}
		return nil
	}})
	// One run each first: the warm pool follows the agent that runs (cli).
	samples := make([][]time.Duration, len(cases))
	// The CPU time of the process run (its user and system time, and its
	// waited-for children's): unlike the wall time, it does not grow with
	// what else the machine runs.
	cpu := make([][]time.Duration, len(cases))
	for i := -1; i < n; i++ {
		for c, tc := range cases {
			if tc.call != nil {
				t0 := time.Now()
				if err := tc.call(); err != nil {
					return fmt.Errorf("%s: %v", tc.name, err)
				}
				if i >= 0 {
					samples[c] = append(samples[c], time.Since(t0))
					cpu[c] = append(cpu[c], 0)
				}
				time.Sleep(40 * time.Millisecond)
				continue
			}
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			cmd.Env, cmd.Dir = tc.env, fresh.ws
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			t0 := time.Now()
			if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != tc.status {
				return fmt.Errorf("%s: %v: %s", tc.name, err, stderr.String())
			}
			if i >= 0 {
				samples[c] = append(samples[c], time.Since(t0))
				cpu[c] = append(cpu[c], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			// The pool refills in the background; give it the time a
			// user between two commands does, so that no case pays for
			// another's refill.
			time.Sleep(40 * time.Millisecond)
		}
	}
	fmt.Printf("gatehouse exec -- true through the service, %d interleaved runs each (median, min, max; the process's median CPU time):\n", n)
	med := make([]time.Duration, len(cases))
	for c, tc := range cases {
		med[c] = median(samples[c])
		cpuOf := fmt.Sprintf("cpu %.2f ms", ms(median(cpu[c])))
		if tc.call != nil {
			cpuOf = "(no process)"
		}
		fmt.Printf("  %-40s %8.2f ms  (%.2f .. %.2f)  %s\n", tc.name, ms(med[c]), ms(minOf(samples[c])), ms(maxOf(samples[c])), cpuOf)
	}
	floor := med[0]
	fmt.Printf("  warm pool / bare bwrap %.2fx (target <= 1.2x); pool off / bare bwrap %.2fx; in-process / bare bwrap %.2fx (target <= 2.5x)\n",
		float64(med[1])/float64(floor), float64(med[2])/float64(floor), float64(med[3])/float64(floor))
	fmt.Printf("  the warm pool takes %.2f ms off a call (pool off - warm pool)\n", ms(med[2]-med[1]))
	// What the front program takes off a warm call: the same call sent
	// by the full program, less the front's; the rest of the call is the
	// service's and the sandbox's.
	past := med[1] - med[5]
	if core != "" {
		fmt.Printf("  the front program takes %.2f ms (%.2f ms of CPU) off a warm call: the full program's %.2f ms is %.2fx bare bwrap\n",
			ms(med[6]-med[1]), ms(median(cpu[6])-median(cpu[1])), ms(med[6]), float64(med[6])/float64(floor))
		past = med[6] - med[5]
	}
	fmt.Printf("  the warm call past the full program's start (its warm call - its help): %.2f ms, %.2fx bare bwrap\n", ms(past), float64(past)/float64(floor))
	fmt.Printf("  the warm call sent from this process: %.2f ms, %.2fx bare bwrap (the service's and the sandbox's part); the front program's start and exit add %.2f ms\n",
		ms(med[fromHere]), float64(med[fromHere])/float64(floor), ms(med[1]-med[fromHere]))
	if st, err := localapi.NewClient(warm.socket()).Status(context.Background()); err == nil {
		fmt.Printf("  warm pool: %d of %d ready for %s, %.1f MiB resident while idle\n", st.WarmPool.Ready, st.WarmPool.Size, st.WarmPool.Agent, float64(st.WarmPool.IdleRSS)/(1<<20))
	}

	// 32 at once.
	for _, w := range []*clientWorld{warm, fresh} {
		name := "warm pool"
		if w == fresh {
			name = "pool off"
		}
		time.Sleep(200 * time.Millisecond)
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		t0 := time.Now()
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(gh, "exec", "--cwd", w.ws, "--", "true")
				cmd.Env, cmd.Dir = w.env, w.ws
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%v: %s", err, out)
				}
			}()
		}
		wg.Wait()
		wall := time.Since(t0)
		close(errs)
		failed := 0
		for range errs {
			failed++
		}
		fmt.Printf("  32 concurrent (max_concurrent 32), %s: %.0f ms wall, %.1f executions/s, %d failed\n",
			name, ms(wall), 32/wall.Seconds(), failed)
	}
	return nil
}
