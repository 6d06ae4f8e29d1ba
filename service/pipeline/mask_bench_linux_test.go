package pipeline

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/egressca"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// BenchmarkMaskedCurl runs curl in the real sandbox against the bound
// host of newMaskEnv: a 100 MiB download, then a small request on a new
// connection, each op one execution. "tunnel" is an agent that does not
// hold the masked credential (TLS tunnelled, the server's own
// certificate); "terminated" holds it (the proxy terminates TLS and
// scans the response). curl's own figures are reported: the body's rate,
// first byte to last (curl-MB/s, median), and the small request's time to first byte
// (first-byte-ms, median), whose TLS handshake includes curl's loading
// of its CA bundle.
//
//	REQUIRE_SANDBOX=1 go test -run '^$' -bench BenchmarkMaskedCurl -benchtime 10x ./service/pipeline
func BenchmarkMaskedCurl(b *testing.B) {
	m := newMaskEnv(b)
	// The tunnel's curl trusts a bundle of the same size as the one a
	// masked execution gets (the system roots and one CA): OpenSSL takes
	// tens of milliseconds to load one, so a one-certificate --cacert
	// would not compare like with like.
	roots, _, err := egressca.SystemRoots()
	if err != nil {
		b.Fatal(err)
	}
	ca, _ := os.ReadFile(m.testCA)
	m.f.write("home/src/roots.pem", string(roots)+string(ca))
	m.f.cfg.Policy.CredentialGrants = policy.CredentialGrants{"github_token": {"claude-code"}}
	base := "https://bound.test:" + m.boundPort
	const w = `-o /dev/null -w '%{size_download} %{time_starttransfer} %{time_total}\n'`
	for _, bc := range []struct{ name, agent, cmd string }{
		{"tunnel", "cli", `curl -sS --fail --cacert roots.pem ` + w + ` ` + base + `/big && curl -sS --fail --cacert roots.pem ` + w + ` ` + base + `/small`},
		{"terminated", "claude-code", `curl -sS --fail -H "Authorization: Bearer $GITHUB_TOKEN" ` + w + ` ` + base + `/big && curl -sS --fail -H "Authorization: Bearer $GITHUB_TOKEN" ` + w + ` ` + base + `/small`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var speed, ttfb []float64
			for b.Loop() {
				o := m.f.run(bc.cmd, func(r *api.ExecRequest) { r.Agent = bc.agent })
				var n1, s1, e1, n2, s2, e2 float64
				if _, err := fmt.Sscanf(o.Result.Stdout, "%g %g %g\n%g %g %g\n", &n1, &s1, &e1, &n2, &s2, &e2); err != nil || exitOf(o) != 0 || n1 != bigSize {
					b.Fatalf("exit %d, stdout %q, stderr %q: %v", exitOf(o), o.Result.Stdout, o.Result.Stderr, err)
				}
				if masked := len(o.Event.CredentialsMasked) > 0; masked != strings.HasPrefix(bc.name, "terminated") {
					b.Fatalf("credentials_masked %v", o.Event.CredentialsMasked)
				}
				// The body's rate, from its first byte to its last: what the
				// proxy's relay costs, apart from the connection's set-up.
				speed, ttfb = append(speed, n1/(e1-s1)), append(ttfb, s2)
			}
			b.ReportMetric(median(speed)/1e6, "curl-MB/s")
			b.ReportMetric(median(ttfb)*1000, "first-byte-ms")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
