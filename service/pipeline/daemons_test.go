package pipeline

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

// unixDaemons reads the words analysis resolved: a daemon's client under a
// wrapper, a socket in a flag's value or an address, and nothing from
// words only known at run time.
func TestUnixDaemons(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cmd, want string }{
		{`docker ps`, "docker"},
		{`sudo -E docker compose up`, "docker"},
		{`podman build . && nerdctl ps`, "podman, nerdctl"},
		{`DOCKER_HOST=unix:///run/user/1000/docker.sock docker info`, "docker, unix:///run/user/1000/docker.sock"},
		{`curl --unix-socket=/var/run/docker.sock http://d/_ping`, "/var/run/docker.sock"},
		{`socat - UNIX-CONNECT:/run/containerd/containerd.sock`, "/run/containerd/containerd.sock"},
		{`python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("/tmp/app.sock")'`, "/tmp/app.sock"},
		{`echo hi > out.sock.txt; cat /run/app.sock.d/x`, ""},
		{`nc -U /tmp/s.sock < req.txt`, "/tmp/s.sock"},
		{`ls ~/.docker; cat socket.py; systemctl --user status`, ""},
		{`S=/run/x.sock; nc -U "$S"`, "/run/x.sock"},
		{`nc -U "$(cat where)"`, ""},
	} {
		got := strings.Join(unixDaemons(analysis.Analyze(c.cmd, analysis.Options{Dir: "/w"})), ", ")
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
}
