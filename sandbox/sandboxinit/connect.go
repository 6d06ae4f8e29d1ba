package sandboxinit

// "connect": the command's way to a host:port that is not HTTP, such as
// ssh's. The sandbox's ssh configuration (service/pipeline/ssh.go) names
// it as ProxyCommand: it asks the egress proxy, through the bridge, for a
// tunnel (HTTP CONNECT) and then carries standard input and output over
// it. It runs as a process of the command, inside the seccomp filter, and
// reaches nothing the command could not reach itself: the bridge is on
// the sandbox's own loopback, and the proxy decides every destination.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// maxConnectHead bounds the proxy's answer to a CONNECT.
const maxConnectHead = 64 << 10

// Connect is "connect PROXY HOST PORT": a tunnel to HOST:PORT through the
// HTTP proxy at PROXY (host:port), carrying standard input to it and what
// it sends to standard output. A refused destination exits 1 with the
// proxy's reason on standard error.
func Connect(args []string) int {
	if len(args) != 3 {
		io.WriteString(stderr, "usage: gatehouse-init connect PROXY HOST PORT (an ssh ProxyCommand: connect 127.0.0.1:3128 %h %p)\n")
		return 2
	}
	proxy, host, port := args[0], strings.Trim(args[1], "[]"), args[2]
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		fmt.Fprintf(stderr, "gatehouse: connect: port %q is not a number from 1 to 65535\n", port)
		return 2
	}
	if host == "" || strings.ContainsAny(host, " \t\r\n/@") {
		fmt.Fprintf(stderr, "gatehouse: connect: %q is not a host name or address\n", host)
		return 2
	}
	c, err := net.DialTimeout("tcp", proxy, 10*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: connect: the egress proxy at %s: %v\n", proxy, err)
		return 1
	}
	defer c.Close()
	br, err := tunnel(c, net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: connect: %v\n", err)
		return 1
	}
	return relay(c, br, os.Stdin, os.Stdout)
}

// tunnel asks the proxy on c for a tunnel to dest and reads its answer.
// The reader it returns holds what the destination sent after the
// answer, if anything came in the same read.
func tunnel(c net.Conn, dest string) (*bufio.Reader, error) {
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest); err != nil {
		return nil, fmt.Errorf("the egress proxy: %v", err)
	}
	br := bufio.NewReaderSize(c, 4096)
	status, err := readLine(br)
	if err != nil {
		return nil, fmt.Errorf("the egress proxy did not answer the tunnel to %s: %v", dest, err)
	}
	length, read := -1, len(status)
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("the egress proxy's answer for %s: %v", dest, err)
		}
		if read += len(line); read > maxConnectHead {
			return nil, fmt.Errorf("the egress proxy's answer for %s is too long", dest)
		}
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	f := strings.Fields(status)
	if len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/1.") && f[1] == "200" {
		return br, nil
	}
	// The proxy says why in the body (egress.md): one line.
	why := strings.Join(f[min(len(f), 1):], " ")
	if length > 0 {
		body := make([]byte, min(length, 4096))
		n, _ := io.ReadFull(br, body)
		if s := strings.TrimSpace(string(body[:n])); s != "" {
			why = s
		}
	}
	return nil, fmt.Errorf("no tunnel to %s: %s", dest, why)
}

// readLine reads one CRLF- or LF-ended line, without its end.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// relay carries in to c and c (through br, which may hold bytes already
// read) to out, until c ends. The end of in is passed on as a half-close.
func relay(c net.Conn, br *bufio.Reader, in io.Reader, out io.Writer) int {
	go func() {
		io.Copy(c, in)
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
	}()
	if _, err := io.Copy(out, br); err != nil {
		return 1
	}
	return 0
}

func init() { Stages["connect"] = Connect }
