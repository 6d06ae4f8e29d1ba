package tray_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
)

// The tray against the real service: 'gatehouse serve' runs with an ask
// rule, 'gatehouse exec' is held by it, the tray's menu shows the request,
// a click on Approve once (through dbusmenu's Event, as a host sends it)
// releases it, the command runs in the sandbox, and the record says the
// tray answered. Then the service stops and the menu says so.
func TestTrayWithRealService(t *testing.T) {
	conn := sessionBus(t)
	sandboxtest.RequireBwrap(t)
	w := serveWatcher(t, conn)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	home := filepath.Join(sandboxtest.Dir(t), "home")
	src := filepath.Join(home, "src")
	config := filepath.Join(home, ".config", "gatehouse")
	for _, d := range []string{src, config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The socket's path must be short: a runtime directory under /tmp.
	runtimeDir, err := os.MkdirTemp("/tmp", "ghtray")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	os.Chmod(runtimeDir, 0o700)
	yaml := "exec:\n  sandbox:\n    init_path: " + exe + "\n    warm_pool: 0\n" +
		"policy:\n  approval_timeout_seconds: 120\n  rules:\n" +
		"    - {name: ask-publish, action: ask, reason: publishing is shared, command: [echo], args: [{seq: [publish]}]}\n"
	if err := os.WriteFile(filepath.Join(config, "config.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), asBinary+"=1", "HOME="+home, "XDG_RUNTIME_DIR="+runtimeDir,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	gatehouse := func(args ...string) *exec.Cmd {
		cmd := exec.Command(exe, args...)
		cmd.Env, cmd.Dir = env, src
		return cmd
	}

	serve := gatehouse("serve")
	serveOut := &lockedBuffer{}
	serve.Stdout, serve.Stderr = serveOut, serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { serve.Wait(); close(served) }()
	t.Cleanup(func() { serve.Process.Kill(); <-served })
	sock := filepath.Join(runtimeDir, "gatehouse", "gatehouse.sock")
	client := localapi.NewClient(sock)
	ctx := context.Background()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := client.Status(ctx); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the service did not come up:\n%s", serveOut)
		}
	}

	tr := startTray(t, conn, w, sock, home)
	tr.waitFor("the running service", func(root node) bool {
		return slices.Contains(root.labels(), "Service running") && slices.Contains(root.labels(), "Approvals (0)")
	})

	// A command the ask rule holds: gatehouse exec waits for an answer.
	held := gatehouse("exec", "--", "echo publish now > published.txt; echo released")
	heldOut := &lockedBuffer{}
	held.Stdout, held.Stderr = heldOut, heldOut
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	heldDone := make(chan error, 1)
	go func() { heldDone <- held.Wait() }()
	t.Cleanup(func() { held.Process.Kill() })

	root := tr.waitFor("the held command", func(root node) bool {
		approvals, _ := root.child("Approvals (1)")
		reqs := approvals.shown()
		return len(reqs) == 1 && slices.Contains(reqs[0].labels(), "Approve once")
	})
	approvals, _ := root.child("Approvals (1)")
	reqs := approvals.shown()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Label, "echo publish now") {
		t.Fatalf("the approvals submenu:\n%s", approvals)
	}
	if !slices.Contains(reqs[0].labels(), "cli in "+src) {
		t.Errorf("the request does not say who asks and where:\n%s", reqs[0])
	}
	select {
	case err := <-heldDone:
		t.Fatalf("gatehouse exec returned before an answer (%v):\n%s", err, heldOut)
	default:
	}
	if _, err := os.Stat(filepath.Join(src, "published.txt")); err == nil {
		t.Fatal("the held command ran before an answer")
	}

	once, ok := reqs[0].child("Approve once")
	if !ok {
		t.Fatalf("no Approve once:\n%s", reqs[0])
	}
	tr.click(once.ID)
	select {
	case err := <-heldDone:
		if err != nil || !strings.Contains(heldOut.String(), "released") {
			t.Fatalf("the approved command: %v\n%s", err, heldOut)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the approved command did not finish:\n%s", heldOut)
	}
	if b, err := os.ReadFile(filepath.Join(src, "published.txt")); err != nil || string(b) != "publish now\n" {
		t.Errorf("the approved command's file: %q %v", b, err)
	}

	// The menu follows: no request waits, and the execution is the newest.
	tr.waitFor("the approval answered and the execution listed", func(root node) bool {
		recent, ok := root.child("Recent executions")
		return slices.Contains(root.labels(), "Approvals (0)") && ok && len(recent.shown()) > 0 &&
			strings.HasPrefix(recent.shown()[0].Label, "✓ cli · echo")
	})

	// The record links the execution to the tray's answer.
	evs, err := client.Events(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var answered *api.ApprovalRecord
	for _, e := range evs {
		if e.Approval != nil && e.Status == "completed" {
			answered = e.Approval
		}
	}
	if answered == nil || answered.By != api.ByTray || answered.Answer != api.AnswerOnce || answered.Rule != "ask-publish" {
		t.Errorf("the execution's approval record %+v; want once, by the tray, rule ask-publish (events %+v)", answered, evs)
	}

	// The service stops: the tray says it is down.
	serve.Process.Signal(os.Interrupt)
	<-served
	root = tr.waitFor("the service down", func(root node) bool { return slices.Contains(root.labels(), "Service down") })
	if start, ok := root.child("Start service"); !ok || !start.Enabled {
		t.Errorf("no enabled Start service while down:\n%s", root)
	}
}
