package pipeline

// Egress tests: real tools (curl, git, python3, bash) inside the real
// sandbox, against servers the test starts on host loopback. They are
// reached through IP-literal entries or through names that the test
// resolver maps to loopback (the proxy accepts loopback for those names in
// tests only). Nothing leaves the machine: names that map elsewhere are
// refused before any dial, and the attempts to go around the proxy are made
// from inside the sandbox, whose network namespace has no route anywhere.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// testResolver maps names to addresses for the proxy; it never asks DNS.
type testResolver map[string]string

func (r testResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, errors.New("no such host (test resolver)")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// egressFixture is a bubblewrap fixture with the given allowlist, whose
// proxy resolves names through names and lets the loop names reach
// loopback.
func egressFixture(t *testing.T, allow []string, names testResolver, loop ...string) *fixture {
	t.Helper()
	f := bwrapFixture(t, func(c *policy.Config) { c.Policy.EgressAllowlist = allow })
	egressTest.Store(f.ex, &egressTestOptions{resolver: names, loopbackNames: loop})
	t.Cleanup(func() { egressTest.Delete(f.ex) })
	return f
}

// hits counts the requests a test server saw, by Host.
type hits struct {
	mu sync.Mutex
	m  map[string]int
}

func (h *hits) add(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]int{}
	}
	h.m[host]++
}

func (h *hits) hosts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// servers are the host-loopback servers of one test.
type servers struct {
	http    *httptest.Server // plain http: "hello host=H uri=U"
	https   *httptest.Server // https with a certificate from the test CA
	port    string           // port of http
	tlsPort string
	caFile  string // the test CA, in the workspace
	seen    hits
}

func startServers(t *testing.T, f *fixture) *servers {
	t.Helper()
	s := &servers{}
	quiet := log.New(io.Discard, "", 0)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.seen.add(r.Host)
		fmt.Fprintf(w, "hello host=%s uri=%s\n", r.Host, r.RequestURI)
	})
	s.http = httptest.NewUnstartedServer(handler)
	s.http.Config.ErrorLog = quiet
	s.http.Start()
	t.Cleanup(s.http.Close)
	s.port = strconv.Itoa(s.http.Listener.Addr().(*net.TCPAddr).Port)

	caPEM, leaf := testCA(t, []string{"allowed.test", "public.test"})
	s.caFile = f.write("home/src/ca.pem", string(caPEM))
	s.https = httptest.NewUnstartedServer(handler)
	s.https.Config.ErrorLog = quiet
	s.https.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
	s.https.StartTLS()
	t.Cleanup(s.https.Close)
	s.tlsPort = strconv.Itoa(s.https.Listener.Addr().(*net.TCPAddr).Port)
	return s
}

// testCA returns a new CA (PEM) and a certificate it issued for names and
// 127.0.0.1.
func testCA(t testing.TB, names []string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gatehouse test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		DNSNames: names, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// hostAddr returns an address of one of this machine's interfaces other
// than loopback, or "" when there is none.
func hostAddr() string {
	ifas, _ := net.InterfaceAddrs()
	for _, ifa := range ifas {
		if n, ok := ifa.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func TestEgressEnvironment(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	o := f.run(`env | grep -i _proxy= | sort; cat /etc/resolv.conf`)
	for _, want := range []string{
		"ALL_PROXY=socks5h://127.0.0.1:3128\n", "HTTPS_PROXY=http://127.0.0.1:3128\n", "HTTP_PROXY=http://127.0.0.1:3128\n",
		"NO_PROXY=" + sandboxinit.NoProxy + "\n", "all_proxy=socks5h://127.0.0.1:3128\n", "http_proxy=http://127.0.0.1:3128\n",
		"https_proxy=http://127.0.0.1:3128\n", "no_proxy=" + sandboxinit.NoProxy + "\n", "nameserver 127.0.0.1\n",
	} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("environment lacks %q:\n%s", want, o.Result.Stdout)
		}
	}
}

// A server a command starts is reached over its loopback by ordinary
// clients with their default proxy handling; the proxy is not asked.
func TestEgressLoopbackStaysInside(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	o := f.run(`set -u
mkdir -p www && echo served > www/index.html
python3 -m http.server --bind 127.0.0.1 --directory www 8765 >/dev/null 2>&1 &
for i in $(seq 100); do curl -s --noproxy '*' -o /dev/null http://127.0.0.1:8765/ && break; sleep 0.1; done
echo "curl $(curl -s http://127.0.0.1:8765/index.html)"
echo "curl-localhost $(curl -s http://localhost:8765/index.html)"
/usr/bin/python3 -c 'import urllib.request; print("urllib", urllib.request.urlopen("http://127.0.0.1:8765/index.html").read().decode().strip())'
/usr/bin/python3 -c 'import urllib.request; print("urllib-localhost", urllib.request.urlopen("http://localhost:8765/index.html").read().decode().strip())'
/usr/bin/python3 -c 'import requests; print("requests", requests.get("http://127.0.0.1:8765/index.html").text.strip())'
node -e 'fetch("http://127.0.0.1:8765/index.html").then(r => r.text()).then(t => console.log("node", t.trim()))'
` + bwrap.InitPath + ` escape-probe http-get http://127.0.0.1:8765/index.html
` + bwrap.InitPath + ` escape-probe http-get http://localhost:8765/index.html
kill %1`)
	for _, want := range []string{"curl served", "curl-localhost served", "urllib served", "urllib-localhost served", "requests served",
		"node served", "http-get: allowed\nhttp-get: allowed"} {
		if !strings.Contains(o.Result.Stdout, want+"\n") {
			t.Errorf("missing %q in:\n%s\nstderr:\n%s", want, o.Result.Stdout, o.Result.Stderr)
		}
	}
	if len(o.Event.Egress.DeniedHosts) != 0 || o.Event.Egress.Allowed != 0 {
		t.Errorf("the proxy was asked: %+v", o.Event.Egress)
	}
}

func TestEgressAllowed(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	s := startServers(t, f)
	repo := filepath.Join(f.dir, "git", "repo.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", repo},
		{"-C", repo, "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	// One commit, made with plumbing so that no user configuration is needed.
	commit := exec.Command("sh", "-c", `set -e
tree=$(git --git-dir="$1" hash-object -w -t tree /dev/null 2>/dev/null || git --git-dir="$1" mktree </dev/null)
c=$(echo init | GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t git --git-dir="$1" commit-tree "$tree")
git --git-dir="$1" update-ref refs/heads/main "$c"
echo "$c"`, "sh", repo)
	out, err := commit.Output()
	if err != nil {
		t.Fatalf("making a commit: %v", err)
	}
	head := strings.TrimSpace(string(out))
	gitExec, _ := exec.Command("git", "--exec-path").Output()
	gitSrv := httptest.NewServer(&cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(gitExec)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(repo), "GIT_HTTP_EXPORT_ALL=1"},
	})
	t.Cleanup(gitSrv.Close)
	gitPort := strconv.Itoa(gitSrv.Listener.Addr().(*net.TCPAddr).Port)

	f.cfg.Policy.EgressAllowlist = []string{
		"allowed.test:" + s.port, "allowed.test:" + s.tlsPort, "127.0.0.1:" + s.port, "git.test:" + gitPort,
	}
	egressTest.Store(f.ex, &egressTestOptions{
		resolver:      testResolver{"allowed.test": "127.0.0.1", "git.test": "127.0.0.1"},
		loopbackNames: []string{"allowed.test", "git.test"},
	})
	cmd := strings.Join([]string{
		`curl -sS --noproxy '' http://allowed.test:` + s.port + `/by-name`,
		`curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/by-literal`,
		`curl -sS --noproxy '' --cacert ca.pem https://allowed.test:` + s.tlsPort + `/tls`,
		`curl -sS --noproxy '' -x socks5h://127.0.0.1:3128 http://allowed.test:` + s.port + `/socks-name`,
		`curl -sS --noproxy '' -x socks5://127.0.0.1:3128 http://127.0.0.1:` + s.port + `/socks-v4`,
		`curl -sS --noproxy '' -x socks5h://127.0.0.1:3128 --cacert ca.pem https://allowed.test:` + s.tlsPort + `/socks-tls`,
		`python3 -c 'import urllib.request; print(urllib.request.urlopen("http://allowed.test:` + s.port + `/python").read().decode(), end="")'`,
		`git ls-remote http://git.test:` + gitPort + `/repo.git`,
	}, " && ")
	o := f.run(cmd)
	for _, want := range []string{
		"hello host=allowed.test:" + s.port + " uri=/by-name\n",
		"hello host=127.0.0.1:" + s.port + " uri=/by-literal\n",
		"hello host=allowed.test:" + s.tlsPort + " uri=/tls\n",
		"hello host=allowed.test:" + s.port + " uri=/socks-name\n",
		"hello host=127.0.0.1:" + s.port + " uri=/socks-v4\n",
		"hello host=allowed.test:" + s.tlsPort + " uri=/socks-tls\n",
		"hello host=allowed.test:" + s.port + " uri=/python\n",
		head + "\tHEAD\n",
		head + "\trefs/heads/main\n",
	} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if exitOf(o) != 0 {
		t.Errorf("exit %d, stderr %q", exitOf(o), o.Result.Stderr)
	}
	eg := o.Event.Egress
	// git ls-remote makes one or two connections (the smart-http probe
	// and the advertisement may share one).
	if eg.Denied != 0 || eg.Allowed < 8 || eg.Allowed > 9 || len(eg.DeniedHosts) != 0 {
		t.Errorf("egress = %+v, want 8 or 9 allowed and none denied\nstdout %s\nstderr %s", eg, o.Result.Stdout, o.Result.Stderr)
	}
}

func TestEgressRefused(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	s := startServers(t, f)
	self := hostAddr()
	if self == "" {
		self = "192.0.2.2"
	}
	f.cfg.Policy.EgressAllowlist = []string{"allowed.test:" + s.port, "127.0.0.1:" + s.port}
	egressTest.Store(f.ex, &egressTestOptions{
		resolver: testResolver{
			"allowed.test": "127.0.0.1", "lo.test": "127.0.0.1", "meta.test": "169.254.169.254", "self.test": self,
		},
		loopbackNames: []string{"allowed.test"},
	})
	// The listed names are made allowlist entries for this test too, so
	// that what refuses them is the address check.
	f.cfg.Policy.EgressAllowlist = append(f.cfg.Policy.EgressAllowlist,
		"lo.test:"+s.port, "meta.test:80", "self.test:"+s.port)
	// raw sends exact bytes to the proxy, for the forms curl would
	// normalise before sending.
	raw := func(req string) string {
		return `{ exec 3<>/dev/tcp/127.0.0.1/3128; printf '` + req + `' >&3; head -c 600 <&3; echo; exec 3>&-; }`
	}
	steps := []struct {
		cmd    string
		record string // the denied host recorded
		out    string // in the output
	}{
		{`curl -sS --noproxy '' http://unlisted.test:` + s.port + `/`, "unlisted.test:" + s.port, "unlisted.test is not on policy.egress_allowlist"},
		{`curl -sS --noproxy '' http://allowed.test:1/`, "allowed.test:1", "port 1 is not allowed for allowed.test"},
		{`curl -sS --noproxy '' http://lo.test:` + s.port + `/`, "lo.test:" + s.port, "lo.test resolves to 127.0.0.1, which is a loopback address"},
		{`curl -sS --noproxy '' http://meta.test/`, "meta.test:80", "meta.test resolves to 169.254.169.254, which is a cloud metadata endpoint"},
		{`curl -sS --noproxy '' http://self.test:` + s.port + `/`, "self.test:" + s.port, "which is an address of this machine"},
		{raw(`GET http://2130706433/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n`), `"2130706433"`, "non-standard form"},
		{raw(`GET http://0x7f.1/ HTTP/1.1\r\nHost: 0x7f.1\r\n\r\n`), `"0x7f.1"`, "non-standard form"},
		{`curl -sS --noproxy '' http://2130706433:` + s.port + `/`, "", "hello"},                         // curl reads it as 127.0.0.1, which is listed
		{`curl -sS --noproxy '' http://0x7f.1/`, "127.0.0.1:80", "port 80 is not allowed for 127.0.0.1"}, // curl reads it as 127.0.0.1
		{`curl -sS --noproxy '' -g 'http://[::1]/'`, "[::1]:80", "the IP address ::1 is not itself an entry"},
		{`curl -sS --noproxy '' http://0.0.0.0/`, "0.0.0.0:80", "the IP address 0.0.0.0 is not itself an entry"},
		{`curl -sS --noproxy '' -p http://127.0.0.2:` + s.port + `/ 2>&1`, "127.0.0.2:" + s.port, "CONNECT tunnel failed, response 403"},
		{`curl -sS --noproxy '' -H 'Host: unlisted.test' http://allowed.test:` + s.port + `/`, "unlisted.test:80", "the Host header (unlisted.test:80) names another destination"},
		{`curl -sS --noproxy '' -p --proxy-header 'Host: allowed.test:` + s.port + `' http://unlisted2.test:` + s.port + `/ 2>&1`, "unlisted2.test:" + s.port, "CONNECT tunnel failed, response 403"},
		{raw(`CONNECT allowed.test.:` + s.port + ` HTTP/1.1\r\n\r\n`), `"allowed.test.:` + s.port + `"`, "ends in a dot"},
		{`curl -sS --noproxy '' -x socks5h://127.0.0.1:3128 http://unlisted3.test/ 2>&1`, "unlisted3.test:80", "SOCKS5 connection to unlisted3.test. (2)"}, // 2: not allowed by ruleset
	}
	var cmds []string
	for i, st := range steps {
		cmds = append(cmds, fmt.Sprintf("echo '### %d'; %s", i, st.cmd))
	}
	o := f.run(strings.Join(cmds, "\n"))
	parts := regexp.MustCompile(`(?m)^### \d+\n`).Split(o.Result.Stdout, -1)[1:]
	if len(parts) != len(steps) {
		t.Fatalf("output has %d parts, want %d:\n%s\nstderr %s", len(parts), len(steps), o.Result.Stdout, o.Result.Stderr)
	}
	var want []string
	for i, st := range steps {
		if !strings.Contains(parts[i], st.out) {
			t.Errorf("%s:\n  got %q\n  want %q", st.cmd, parts[i], st.out)
		}
		if st.record != "" && !slices.Contains(want, st.record) {
			want = append(want, st.record)
		}
	}
	eg := o.Event.Egress
	if !slices.Equal(eg.DeniedHosts, want) || eg.Denied != len(want) || eg.Allowed != 1 {
		t.Errorf("egress = %+v\nwant denied_hosts %q and 1 allowed", eg, want)
	}
	// The server saw the one allowed request only.
	if got := s.seen.hosts(); !slices.Equal(got, []string{"2130706433:" + s.port}) && !slices.Equal(got, []string{"127.0.0.1:" + s.port}) {
		t.Errorf("the server saw %q", got)
	}
}

// Going around the proxy fails at once: the namespace has no route and no
// resolver, and the proxy's socket is out of the command's reach.
func TestEgressBypass(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, testResolver{"allowed.test": "127.0.0.1"}, "allowed.test")
	s := startServers(t, f)
	f.cfg.Policy.EgressAllowlist = []string{"allowed.test:" + s.port, "127.0.0.1:" + s.port}
	self := hostAddr()
	if self == "" {
		self = "192.0.2.2"
	}
	resolver := "10.255.255.53"
	if b, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		if m := regexp.MustCompile(`(?m)^nameserver\s+(\S+)`).FindSubmatch(b); m != nil {
			resolver = string(m[1])
		}
	}
	dnsQuery := `import socket,sys
q=b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
s=socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
try:
    s.sendto(q,(sys.argv[1],53)); s.recvfrom(512); print("answered")
except OSError as e:
    print("error", e); sys.exit(1)`
	f.write("home/src/dns.py", dnsQuery)
	steps := []struct{ name, cmd string }{
		{"curl noproxy literal", `curl -sS --noproxy '' -m 10 --noproxy '*' http://127.0.0.1:` + s.port + `/`},
		{"curl noproxy name", `curl -sS --noproxy '' -m 10 --noproxy '*' http://allowed.test:` + s.port + `/`},
		{"curl noproxy host address", `curl -sS --noproxy '' -m 10 --noproxy '*' http://` + self + `:` + s.port + `/`},
		{"tcp to host address", `exec 3<>/dev/tcp/` + self + `/` + s.port},
		{"tcp to 8.8.8.8", `exec 3<>/dev/tcp/8.8.8.8/53`},
		{"udp dns to 8.8.8.8", `python3 dns.py 8.8.8.8`},
		{"udp dns to the host resolver", `python3 dns.py ` + resolver},
		{"bash udp to 8.8.8.8", `echo x >/dev/udp/8.8.8.8/53`},
		{"getent", `getent hosts example.com`},
		{"python resolver", `python3 -c 'import socket; socket.getaddrinfo("example.com", 443)'`},
	}
	// Each attempt prints its name, the time before, its status and the
	// time after.
	var cmds []string
	for _, st := range steps {
		cmds = append(cmds, fmt.Sprintf("echo '### %s'; date +%%s%%N; ( %s ) >/dev/null 2>&1; echo \"rc $?\"; date +%%s%%N", st.name, st.cmd))
	}
	o := f.run(strings.Join(cmds, "\n"))
	re := regexp.MustCompile(`(?m)^### (.*)\n(\d+)\nrc (\d+)\n(\d+)$`)
	got := map[string][2]int{}
	for _, m := range re.FindAllStringSubmatch(o.Result.Stdout, -1) {
		rc, _ := strconv.Atoi(m[3])
		t0, _ := strconv.ParseInt(m[2], 10, 64)
		t1, _ := strconv.ParseInt(m[4], 10, 64)
		got[m[1]] = [2]int{rc, int((t1 - t0) / 1e6)}
	}
	t.Logf("attempts (status, ms): %v", got)
	for _, st := range steps {
		r, ok := got[st.name]
		switch {
		case !ok:
			t.Errorf("%s: no result in %q (stderr %q)", st.name, o.Result.Stdout, o.Result.Stderr)
		case r[0] == 0:
			t.Errorf("%s: succeeded", st.name)
		case r[1] > 900: // the resolver timeout in resolv.conf is 1s: below it, nothing waited
			t.Errorf("%s: failed after %d ms, want an immediate error", st.name, r[1])
		}
	}
	// Go's resolver fails without waiting too (the test binary is the
	// probe: its own start-up, slow under -race, is not timed), and the
	// proxy's socket is refused to the command by the seccomp filter.
	p := f.run(bwrap.InitPath + " escape-probe resolve example.com; " + bwrap.InitPath + " escape-probe unix-connect " + bwrap.ProxySocket)
	if out := p.Result.Stdout; !strings.Contains(out, "resolve: blocked") || strings.Contains(out, "timeout") ||
		!strings.Contains(out, "unix-connect: blocked: EPERM") {
		t.Errorf("probes = %q, want the resolver refused at once and the socket refused (EPERM)", out)
	}
	if eg := o.Event.Egress; eg.Allowed != 0 || eg.Denied != 0 {
		t.Errorf("egress = %+v: a bypass reached the proxy", eg)
	}
	if hs := s.seen.hosts(); len(hs) != 0 {
		t.Errorf("the server was reached: %q", hs)
	}
}

func TestEgressEmptyAllowlist(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, testResolver{"allowed.test": "127.0.0.1"}, "allowed.test")
	s := startServers(t, f)
	o := f.run(`curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/; curl -sS --noproxy '' http://allowed.test:` + s.port + `/; curl -sS --noproxy '' -x socks5h://127.0.0.1:3128 http://allowed.test/ 2>&1`)
	if n := strings.Count(o.Result.Stdout, "policy.egress_allowlist is empty: no egress"); n != 2 {
		t.Errorf("stdout %q, want two no-egress refusals", o.Result.Stdout)
	}
	eg := o.Event.Egress
	want := []string{"127.0.0.1:" + s.port, "allowed.test:" + s.port, "allowed.test:80"}
	if eg.Allowed != 0 || eg.Denied != 3 || !slices.Equal(eg.DeniedHosts, want) {
		t.Errorf("egress = %+v, want 3 denied %q", eg, want)
	}
}

// "*" allows public names (here a name the test maps to its server) but
// not the metadata or loopback addresses, nor IP literals.
func TestEgressStar(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, []string{"*"}, testResolver{
		"public.test": "127.0.0.1", "meta.test": "169.254.169.254", "meta6.test": "fd00:ec2::254",
		"lo.test": "127.0.0.1", "ali.test": "100.100.100.200",
	}, "public.test")
	s := startServers(t, f)
	f.cfg.Exec.Egress.AllowedPorts = []int{80, 443, mustAtoi(t, s.port), mustAtoi(t, s.tlsPort)}
	o := f.run(strings.Join([]string{
		`curl -sS --noproxy '' http://public.test:` + s.port + `/star`,
		`curl -sS --noproxy '' --cacert ca.pem https://public.test:` + s.tlsPort + `/star-tls`,
		`curl -sS --noproxy '' http://meta.test/latest/meta-data/`,
		`curl -sS --noproxy '' http://meta6.test/`,
		`curl -sS --noproxy '' http://ali.test/`,
		`curl -sS --noproxy '' http://lo.test:` + s.port + `/`,
		`curl -sS --noproxy '' http://169.254.169.254/`,
		`curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/`,
		`curl -sS --noproxy '' http://localhost:` + s.port + `/`,
	}, "; "))
	for _, want := range []string{
		"hello host=public.test:" + s.port + " uri=/star\n",
		"hello host=public.test:" + s.tlsPort + " uri=/star-tls\n",
		"meta.test resolves to 169.254.169.254, which is a cloud metadata endpoint",
		"meta6.test resolves to fd00:ec2::254, which is a cloud metadata endpoint",
		"ali.test resolves to 100.100.100.200, which is a cloud metadata endpoint",
		"lo.test resolves to 127.0.0.1, which is a loopback address",
		"the IP address 169.254.169.254 is not itself an entry",
		"the IP address 127.0.0.1 is not itself an entry",
		"localhost is not itself an entry",
	} {
		if !strings.Contains(o.Result.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, o.Result.Stdout)
		}
	}
	if eg := o.Event.Egress; eg.Allowed != 2 || eg.Denied != 7 {
		t.Errorf("egress = %+v, want 2 allowed and 7 denied", eg)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEgressBurstRecordsFirst16(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, []string{"allowed.test"}, nil)
	o := f.run(`for i in $(seq -w 1 24); do curl -s -o /dev/null http://d$i.test/; done`)
	var want []string
	for i := 1; i <= egress.MaxDeniedHosts; i++ {
		want = append(want, fmt.Sprintf("d%02d.test:80", i))
	}
	eg := o.Event.Egress
	if eg.Denied != 24 || !slices.Equal(eg.DeniedHosts, want) {
		t.Errorf("egress = %+v, want 24 denied and the first 16 listed", eg)
	}
}

// The bridge listens before the command starts: a request in its first
// instruction never meets "connection refused".
func TestEgressFirstInstruction(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	s := startServers(t, f)
	f.cfg.Policy.EgressAllowlist = []string{"127.0.0.1:" + s.port}
	const n = 20
	for i := range n {
		o := f.run(`curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/first`)
		if exitOf(o) != 0 || o.Result.Stdout != "hello host=127.0.0.1:"+s.port+" uri=/first\n" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q", i, exitOf(o), o.Result.Stdout, o.Result.Stderr)
		}
		if o.Event.Egress.Allowed != 1 {
			t.Fatalf("run %d: egress %+v", i, o.Event.Egress)
		}
	}
}

// An agent named in policy.egress_allowlist_by_agent gets its own list;
// the others get policy.egress_allowlist.
func TestEgressPerAgent(t *testing.T) {
	t.Parallel()
	f := egressFixture(t, nil, nil)
	s := startServers(t, f)
	f.cfg.Policy.EgressAllowlist = []string{"127.0.0.1:" + s.port}
	f.cfg.Policy.EgressAllowlistByAgent = policy.EgressByAgent{"claude-code": {}}
	cmd := `curl -sS --noproxy '' http://127.0.0.1:` + s.port + `/agent 2>&1`
	asAgent := func(agent string) func(*api.ExecRequest) {
		return func(r *api.ExecRequest) { r.Agent = agent }
	}

	o := f.run(cmd, asAgent("cli"))
	if o.Result.Stdout != "hello host=127.0.0.1:"+s.port+" uri=/agent\n" || o.Event.Egress.Allowed != 1 {
		t.Errorf("cli: stdout %q, egress %+v; want the request through", o.Result.Stdout, o.Event.Egress)
	}
	o = f.run(cmd, asAgent("claude-code"))
	if !strings.Contains(o.Result.Stdout, "policy.egress_allowlist_by_agent.claude-code is empty: no egress") ||
		o.Event.Egress.Denied != 1 || o.Event.Egress.Allowed != 0 {
		t.Errorf("claude-code: stdout %q, egress %+v; want the per-agent refusal", o.Result.Stdout, o.Event.Egress)
	}
	s.seen.mu.Lock()
	got := s.seen.m["127.0.0.1:"+s.port]
	s.seen.mu.Unlock()
	if got != 1 {
		t.Errorf("the server saw %d requests, want 1 (cli's only)", got)
	}
}
