package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/localapi"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// serveScript serves one body on the port it is given, on the session's
// loopback, until the file stop appears in its directory.
const serveScript = `import http.server, os, sys, threading, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"served-from-the-session\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
print("serving", flush=True)
while not os.path.exists("stop"):
    time.sleep(0.05)
`

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A session's port opened and closed from the dashboard in Chromium,
// against a real service: an execution of an agent session serves on its
// session's loopback; the Sessions page, open before, comes to list the
// port by itself; Open forwards it
// to this machine's 127.0.0.1, where the test (the host) fetches the
// body; Close ends the forward and the fetch fails.
func TestSessionPortInChromium(t *testing.T) {
	chrome := requireBrowser(t)
	sandboxtest.RequireBwrap(t)
	for _, tool := range []string{"nsenter", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if sandboxtest.Required() {
				t.Fatalf("REQUIRE_SANDBOX=1 but %s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := sandboxtest.Dir(t)
	home := filepath.Join(dir, "home")
	ws := filepath.Join(home, "src")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "serve.py"), []byte(serveScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := os.MkdirTemp("", "ghp") // the socket's path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	exe, _ := os.Executable()
	var log syncBuffer
	svc, err := service.New(service.Options{
		Load: func() (*policy.Loaded, error) {
			l, err := policy.Load(policy.LoadOptions{Home: home})
			if err != nil {
				return nil, err
			}
			l.Config.Exec.DefaultCWD = ws
			l.Config.Exec.Sandbox.WarmPool = 0
			l.Config.Exec.Dashboard.Enabled, l.Config.Exec.Dashboard.Port = true, 0
			return l, nil
		},
		NewExecutor: func(cfg *policy.Config) (*pipeline.Executor, error) {
			return pipeline.New(cfg, pipeline.Options{Home: home, InitPath: exe, HostPath: "/usr/local/bin:/usr/bin:/bin"})
		},
		SocketPath: filepath.Join(run, "gatehouse", "s.sock"),
		RelayDir:   filepath.Join(dir, "relay"),
		Version:    "test",
		Logger:     slog.New(slog.NewTextHandler(&log, nil)),
		Dashboard: func(s *service.Service) service.Dashboard {
			d, err := New(Options{Service: s, TrailError: "none in this test", LaunchDir: filepath.Join(run, "dashboard")})
			if err != nil {
				t.Error(err)
			}
			return d
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	c := localapi.NewClient(filepath.Join(run, "gatehouse", "s.sock"))
	var login api.DashboardLoginResponse
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := c.Status(context.Background()); err == nil {
			if login = svc.DashboardLogin(); login.Error == "" {
				break
			}
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the service and its dashboard did not come up (%s):\n%s", login.Error, log.String())
		}
	}
	base := regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+`).FindString(login.URL)

	// The browser, signed in with the code the service handed out.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.WindowSize(1280, 860), chromedp.Flag("lang", "en-US"))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's own sandbox refuses root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	bctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	b := &browser{t: t, ctx: bctx}
	b.do("signing in", chromedp.Navigate("file://"+login.LaunchFile), chromedp.WaitVisible(chromedp.CSS("#live")))
	b.do("the Sessions page, no session yet", chromedp.Navigate(base+"/sessions"), chromedp.WaitVisible(chromedp.CSS("#no-sessions")))

	// The agent session's server: it runs until the test says stop.
	port := freePort(t)
	const session = "dash-ports-session-1"
	var out, errOut syncBuffer
	ended := make(chan *api.End, 1)
	go func() {
		end, err := c.Execute(context.Background(), api.ExecuteRequest{Request: api.ExecRequest{
			Command: "python3 serve.py " + strconv.Itoa(port), Cwd: ws, Agent: "claude-code", Surface: api.SurfaceCLI, SessionID: session,
		}}, &out, &errOut)
		if err != nil {
			fmt.Fprintf(&errOut, "execute: %v\n", err)
		}
		ended <- end
	}()
	t.Cleanup(func() { os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644) })
	listening := func(n api.SessionNetwork) bool {
		return slices.ContainsFunc(n.Listening, func(l api.ListeningPort) bool { return l.Port == port })
	}
	for start := time.Now(); !slices.ContainsFunc(svc.Ports(), listening); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			select {
			case end := <-ended:
				t.Fatalf("the server's execution ended: %+v\nstdout %q\nstderr %q", end, out.String(), errOut.String())
			default:
			}
			t.Fatalf("nothing listens on %d in the session: %+v\nstderr %q", port, svc.Ports(), errOut.String())
		}
	}

	row := fmt.Sprintf(`section.session[data-session=%q] tr[data-port="%d"]`, session, port)
	// The page shows the port by itself, as the list changes.
	b.do("the port on the Sessions page", chromedp.WaitVisible(chromedp.CSS(row+" button.open-port")))
	if got := b.eval(`document.querySelector(` + strconv.Quote(`section.session[data-session="`+session+`"] h2`) + `).textContent`); got != "claude-code · session "+session {
		t.Errorf("the session's heading reads %q", got)
	}

	// Open: the service forwards the port, opened by the dashboard.
	b.submit("opening the port", row+" button.open-port")
	flash := b.eval(`document.querySelector("p.flash").textContent`)
	m := regexp.MustCompile(fmt.Sprintf(`^Opened port %d of session %s on this machine: http://127\.0\.0\.1:([0-9]+)/$`, port, session)).FindStringSubmatch(flash)
	if m == nil {
		t.Fatalf("after Open the page says %q", flash)
	}
	hostPort, _ := strconv.Atoi(m[1])
	var fw *api.PortForward
	for _, n := range svc.Ports() {
		for i := range n.Forwards {
			if n.SessionID == session && n.Forwards[i].Port == port {
				fw = &n.Forwards[i]
			}
		}
	}
	if fw == nil || fw.HostPort != hostPort || fw.By != api.ByDashboard {
		t.Fatalf("the service's forward %+v; want port %d on 127.0.0.1:%d by the dashboard", fw, port, hostPort)
	}
	if got := b.eval(`document.querySelector(` + strconv.Quote(row+" td.forward a") + `).textContent`); got != "127.0.0.1:"+m[1] {
		t.Errorf("the row's forward reads %q", got)
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 10 * time.Second}
	target := fmt.Sprintf("http://127.0.0.1:%d/", hostPort)
	resp, err := hc.Get(target)
	if err != nil {
		t.Fatalf("fetching the forward from the host: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "served-from-the-session\n" {
		t.Errorf("the forward served %q", body)
	}

	// Close: the forward ends, and the host reaches nothing there.
	b.submit("closing the forward", row+" button.close-port")
	if got := b.eval(`document.querySelector("p.flash").textContent`); got != fmt.Sprintf("Closed the forward of port %d of session %s (127.0.0.1:%d).", port, session, hostPort) {
		t.Errorf("after Close the page says %q", got)
	}
	b.do("Open offered again", chromedp.WaitVisible(chromedp.CSS(row+" button.open-port")))
	if resp, err := hc.Get(target); err == nil {
		resp.Body.Close()
		t.Errorf("the host still reaches %s after Close: %s", target, resp.Status)
	}

	// The execution ran in its session's network.
	os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644)
	select {
	case end := <-ended:
		if end == nil || end.Exit != 0 || end.Event.Network != api.NetworkSessionPrefix+session {
			t.Errorf("the server's execution: %+v\nstderr %q", end, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Error("the server's execution did not end")
	}
}

// freePort is a port free on the host now, so that the forward can take
// the same one (the session's loopback is empty: any port is free there).
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
