package pipeline

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxtest"
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/broker"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// sshServer is an sshd the test started on 127.0.0.1, as the user running
// the tests, with a host key of its own; it accepts the user key whose
// private half is in key.
type sshServer struct {
	port    string
	hostPub string // the host key, "ssh-ed25519 AAAA..."
	key     string // the user key's private half, as ssh-keygen wrote it
	userPub string
	log     *bytes.Buffer
}

// startSSHD starts Debian's sshd (openssh-server: .ci/test-deps.sh) in
// dir on a free loopback port and waits until it accepts connections.
func startSSHD(t *testing.T, dir string) *sshServer {
	t.Helper()
	const sshd = "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		if sandboxtest.Required() {
			t.Fatalf("%s: %v; install openssh-server (.ci/test-deps.sh)", sshd, err)
		}
		t.Skipf("%s: %v", sshd, err)
	}
	if os.Getuid() == 0 {
		// sshd run by root checks its privilege separation directory,
		// which Debian's service makes when it starts.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &sshServer{log: &bytes.Buffer{}}
	for _, k := range []string{"host", "user"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", k+"@gatehouse-test", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s.hostPub, s.key, s.userPub = strings.TrimSpace(read("host.pub")), read("user"), strings.TrimSpace(read("user.pub"))
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(s.userPub+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	conf := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(conf, []byte(strings.Join([]string{
		"Port " + s.port,
		"ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(dir, "host"),
		"PidFile none",
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"LogLevel VERBOSE",
		"",
	}, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", conf)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd:\n%s", s.log)
		}
	})
	// Ready when it accepts: a wait for readiness, not a timed check.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", "127.0.0.1:"+s.port)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on %s: %v\n%s", s.port, err, s.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// TestGitOverSSH clones, commits, signs and pushes over ssh inside the
// sandbox, through the egress proxy, with a key that reaches the command
// from the keychain as a credential file of kind ssh_key; without the
// allowlist entry the clone fails with Gatehouse's line, and ~/.ssh stays
// hidden but for the known_hosts copy.
func TestGitOverSSH(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireBwrap(t)
	dir := sandboxtest.Dir(t)
	s := startSSHD(t, filepath.Join(dir))
	hostPort := "127.0.0.1:" + s.port
	f := newFixture(t, filepath.Join(dir, "f"), func(c *policy.Config) {
		c.Exec.Sandbox.Backend = "bubblewrap"
		c.Exec.Credentials.Files = policy.CredentialFiles{"id_gatehouse": {Credential: "deploy_ssh", Kind: policy.KindSSHKey}}
		c.Policy.EgressAllowlist = []string{hostPort}
	})
	if err := f.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m := keyring.NewMemory()
	// As 'gatehouse cred set' stores a file read from standard input:
	// without its final newline, which OpenSSH needs.
	if err := broker.Set(m, "deploy_ssh", strings.TrimSuffix(s.key, "\n"), time.Now()); err != nil {
		t.Fatal(err)
	}
	f.ex.opts.Keyring = m
	f.ex.opts.CredentialDir = filepath.Join(f.dir, "cred")

	// The person's ~/.ssh: the server's host key is known; the rest is
	// theirs alone.
	f.write("home/.ssh/known_hosts", "["+"127.0.0.1]:"+s.port+" "+s.hostPub+"\n")
	f.write("home/.ssh/id_ed25519", "SECRET-KEY-IN-DOT-SSH\n")
	f.write("home/.ssh/config", "Host *\n  ProxyCommand /bin/false\n")
	allowed := f.write("home/src/allowed_signers", "a@example.com "+s.userPub+"\n")

	// The server's repository, with one commit.
	srv := filepath.Join(f.dir, "srv")
	repo := filepath.Join(srv, "repo.git")
	f.hostGit(f.dir, "init", "-q", "--bare", "-b", "main", repo)
	f.hostGit(f.dir, "init", "-q", "-b", "main", filepath.Join(srv, "work"))
	f.hostGit(filepath.Join(srv, "work"), "commit", "-q", "--allow-empty", "-m", "first")
	f.hostGit(filepath.Join(srv, "work"), "push", "-q", repo, "main")

	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	url := "ssh://" + u.Username + "@" + hostPort + repo
	o := f.run(strings.Join([]string{
		`set -e`,
		`export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A GIT_COMMITTER_EMAIL=a@example.com`,
		`git clone -q ` + url + ` clone`,
		`cd clone`,
		`git log -1 --format=cloned:%s`,
		`git commit -q --allow-empty -m plain`,
		`git -c gpg.format=ssh -c user.signingkey=/run/gatehouse/cred/id_gatehouse commit -q --allow-empty -S -m signed`,
		`git -c gpg.ssh.allowedSignersFile=` + allowed + ` verify-commit HEAD`,
		`echo verified`,
		`git push -q origin HEAD:main`,
		`echo pushed`,
		`ssh -F "$GATEHOUSE_SSH_CONFIG" -p ` + s.port + ` ` + u.Username + `@127.0.0.1 echo remote-ok`,
		`if cat ~/.ssh/id_* 2>/dev/null; then echo dot-ssh-readable; fi`,
		`if cat ~/.ssh/config 2>/dev/null; then echo dot-ssh-config-readable; fi`,
		`echo "known=$(wc -l < /run/gatehouse/egress/known_hosts)"`,
	}, "\n"))
	if exitOf(o) != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", exitOf(o), o.Result.Stdout, o.Result.Stderr)
	}
	if want := "cloned:first\nverified\npushed\nremote-ok\nknown=1\n"; o.Result.Stdout != want {
		t.Errorf("stdout %q, want %q\nstderr %s", o.Result.Stdout, want, o.Result.Stderr)
	}
	if !strings.Contains(o.Result.Stderr, `Good "git" signature for a@example.com with ED25519 key`) {
		t.Errorf("verify-commit said:\n%s", o.Result.Stderr)
	}
	// The server has both commits, the signed one on top, and it
	// verifies on the host too.
	if got := f.hostGit(repo, "log", "--format=%s", "main"); got != "signed\nplain\nfirst\n" {
		t.Errorf("the server's main: %q", got)
	}
	f.hostGit(repo, "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "main")
	// The card attributes the connections to the host.
	eg := o.Event.Egress
	if eg.Denied != 0 || eg.Allowed < 2 || !slices.Equal(eg.AllowedHosts, []string{hostPort}) {
		t.Errorf("egress = %+v, want the clone's and the push's connections to %s", eg, hostPort)
	}
	if !slices.Equal(o.Event.Credentials, []string{"deploy_ssh"}) {
		t.Errorf("credentials_injected %v", o.Event.Credentials)
	}

	// Not allowed: the clone fails, and the command's stderr ends with
	// Gatehouse's line for the destination.
	f.cfg.Policy.EgressAllowlist = []string{"127.0.0.1:1"}
	o = f.run(`git clone -q ` + url + ` refused`)
	if exitOf(o) == 0 {
		t.Fatalf("the clone worked without the allowlist entry:\n%s", o.Result.Stderr)
	}
	line := "gatehouse: egress to " + hostPort + " refused (not in policy.egress_allowlist)"
	if !strings.Contains(o.Result.Stderr, line) || !strings.Contains(o.Result.Stderr, "gatehouse: connect: no tunnel to "+hostPort) {
		t.Errorf("stderr lacks %q:\n%s", line, o.Result.Stderr)
	}
	if !slices.Equal(o.Event.Egress.DeniedHosts, []string{hostPort}) {
		t.Errorf("denied_hosts %v", o.Event.Egress.DeniedHosts)
	}
}

// Every sandboxed command gets the ssh configuration, a warm one too;
// without ssh_key files it names no identity, without ~/.ssh/known_hosts
// its copy is empty, and a GIT_SSH_COMMAND the request sets is kept.
func TestSSHConfigInSandbox(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, func(c *policy.Config) { c.Exec.Env.AgentSettable = []string{"GIT_SSH_COMMAND"} })
	o := f.run(`cat "$GATEHOUSE_SSH_CONFIG"; echo "git=$GIT_SSH_COMMAND"; wc -c < /run/gatehouse/egress/known_hosts; touch /run/gatehouse/egress/x 2>/dev/null || echo read-only`)
	if exitOf(o) != 0 {
		t.Fatalf("exit %d: %s", exitOf(o), o.Result.Stderr)
	}
	want := sshConfigText(nil, bwrap.BridgeAddr) + "git=ssh -F /run/gatehouse/egress/ssh_config\n0\nread-only\n"
	if o.Result.Stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", o.Result.Stdout, want)
	}
	if !strings.Contains(want, "ProxyCommand /run/gatehouse/init connect 127.0.0.1:3128 %h %p\n") || strings.Contains(want, "IdentityFile") {
		t.Errorf("configuration:\n%s", want)
	}
	o = f.run(`echo "git=$GIT_SSH_COMMAND"`, func(r *api.ExecRequest) { r.Env = map[string]string{"GIT_SSH_COMMAND": "ssh -v"} })
	if o.Result.Stdout != "git=ssh -v\n" {
		t.Errorf("a request's GIT_SSH_COMMAND became %q", o.Result.Stdout)
	}
}
