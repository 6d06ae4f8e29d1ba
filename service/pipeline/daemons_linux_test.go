package pipeline

import (
	"os"
	"strings"
	"testing"
)

// A command that fails reaching a host daemon over a Unix socket (the
// seccomp stage refuses socket(AF_UNIX)) ends its stderr with a line
// saying so, naming the client or the socket; a command that did not
// fail, or named none, gets no such line.
func TestRefusalLinesNameUnixSocketDaemons(t *testing.T) {
	t.Parallel()
	f := bwrapFixture(t, nil)
	// A docker client as far as the sandbox goes: it opens a Unix socket
	// to the daemon, unless asked only for its version.
	docker := f.write("home/src/bin/docker", `#!/usr/bin/python3
import socket, sys
if sys.argv[1:] == ["--version"]:
    print("Docker version 0.0.0-fake")
    sys.exit(0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/var/run/docker.sock")
`)
	if err := os.Chmod(docker, 0o755); err != nil {
		t.Fatal(err)
	}
	const line = "gatehouse: host daemons over Unix sockets (%s) are unreachable from the sandbox; run that step outside the agent"
	cases := []struct {
		cmd, names string // names "" for no line
		stderr     string // in the command's own stderr
	}{
		{`bin/docker ps`, "docker", "PermissionError"},
		{`DOCKER_HOST=unix:///run/user/1000/docker.sock bin/docker ps`, "docker, unix:///run/user/1000/docker.sock", "PermissionError"},
		{`curl -sS --unix-socket /var/run/docker.sock http://localhost/_ping`, "/var/run/docker.sock", "curl: "},
		{`python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("/run/podman/podman.sock")'`, "/run/podman/podman.sock", "Operation not permitted"},
		// Not failed, or not a daemon: no line.
		{`bin/docker --version`, "", ""},
		{`echo /var/run/docker.sock`, "", ""},
		{`ls /nonexistent`, "", "No such file"},
		{`python3 -c 'import socket; socket.socketpair()'`, "", ""},
	}
	for _, c := range cases {
		o := f.run(c.cmd)
		var want []string
		if c.names != "" {
			want = []string{strings.Replace(line, "%s", c.names, 1)}
			if exitOf(o) == 0 {
				t.Errorf("%s: exit 0, want a failure", c.cmd)
			}
		}
		got := gatehouseLines(t, o.Result.Stderr)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: Gatehouse's lines\n  %q\nwant\n  %q\nstderr: %s", c.cmd, got, want, o.Result.Stderr)
		}
		if !strings.Contains(o.Result.Stderr, c.stderr) {
			t.Errorf("%s: stderr lacks %q: %s", c.cmd, c.stderr, o.Result.Stderr)
		}
	}
}
