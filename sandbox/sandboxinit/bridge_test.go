package sandboxinit

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestProxyEnv(t *testing.T) {
	t.Parallel()
	b := &Bridge{Listen: []string{"127.0.0.1:3128"}, Socket: "/run/gatehouse/proxy.sock"}
	got := b.ProxyEnv([]string{"PATH=/bin", "http_proxy=http://evil:1", "No_Proxy=*", "HOME=/h"})
	want := []string{
		"PATH=/bin", "HOME=/h",
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=socks5h://127.0.0.1:3128", "all_proxy=socks5h://127.0.0.1:3128",
		"NO_PROXY=localhost,.localhost,127.0.0.1,127.0.0.0/8,::1,[::1]", "no_proxy=localhost,.localhost,127.0.0.1,127.0.0.0/8,::1,[::1]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ProxyEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestPlanBridgeRoundTrip(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	p := &Stage1Spec{Shell: "/bin/sh", Argv: []string{"/bin/sh"}, Seccomp: "required",
		Bridge: &Bridge{Listen: []string{"127.0.0.1:3128"}, Socket: "/run/gatehouse/proxy.sock"}}
	if err := WritePlan(&sb, p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPlan(strings.NewReader(sb.String()))
	if err != nil || got.Bridge == nil || got.Bridge.Socket != p.Bridge.Socket || !slices.Equal(got.Bridge.Listen, p.Bridge.Listen) {
		t.Fatalf("ReadPlan = %+v, %v", got, err)
	}
	sb.Reset()
	WritePlan(&sb, &Stage1Spec{Shell: "/bin/sh", Argv: []string{"/bin/sh"}, Bridge: &Bridge{Listen: []string{"127.0.0.1:1"}}})
	if _, err := ReadPlan(strings.NewReader(sb.String())); err == nil {
		t.Error("a bridge without a socket was accepted")
	}
}

func TestBridgeListenError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b := &Bridge{Listen: []string{"127.0.0.1:0", ln.Addr().String()}, Socket: "/x"}
	if _, err := b.ListenAll(); err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("ListenAll on a busy port: %v", err)
	}
	if _, err := (&Bridge{Listen: []string{"127.0.0.1:0"}}).ListenAll(); err == nil {
		t.Error("a bridge without a socket listened")
	}
}
