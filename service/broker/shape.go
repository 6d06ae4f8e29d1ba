package broker

// This file decides how a credential mapped with no hosts and no mode
// (the plain "${credential:ID}" form: mode auto) reaches a command. The
// decision is made where the value is first known, when the lease reads
// it from the keychain, and from the value's shape alone:
//
//   - a value of a known service's format (Services) is masked, bound to
//     that service's API hosts: the command gets a placeholder, and the
//     egress proxy puts the value on the wire to those hosts only;
//   - a JWT is masked when its "aud" claim names https URLs, bound to
//     their hosts; with any other audience it is injected;
//   - everything else is injected, as before, with the reason said on the
//     execution card: a value of no known shape, or one the proxy cannot
//     serve masked (an AWS key signs requests inside the command; a
//     refresh token or private key is not sent in a request header).
//
// Nothing here keeps or returns any part of a value beyond the name of
// its service.

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strings"
)

// A Service is a kind of credential recognised by the shape of its value,
// and the hosts a masked one is bound to.
type Service struct {
	// Name is the service, as messages say it: "GitHub".
	Name    string
	Formats []Format
	// Hosts are the service's API hosts, written as egress allowlist
	// entries.
	Hosts []string
}

// A Format is one shape of a service's tokens: a public prefix, then at
// least MinBody characters of the alphabet Body.
type Format struct {
	Prefix  string
	Body    string
	MinBody int
}

// Prefixes returns the prefixes of s's formats.
func (s Service) Prefixes() []string {
	var out []string
	for _, f := range s.Formats {
		out = append(out, f.Prefix)
	}
	return out
}

// Alphabets of the services' token bodies.
const (
	shapeAlnum  = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	shapeB64url = shapeAlnum + "-_"
)

// Services are the credentials masked by default. Anthropic's sk-ant-
// comes before OpenAI's sk-, which it begins with.
var Services = []Service{
	{Name: "GitHub", Formats: []Format{{"ghp_", shapeAlnum, 30}, {"gho_", shapeAlnum, 30}, {"ghu_", shapeAlnum, 30}, {"ghs_", shapeAlnum, 30}, {"github_pat_", shapeAlnum + "_", 40}},
		Hosts: []string{"api.github.com", "github.com", "uploads.github.com", "*.githubusercontent.com"}},
	{Name: "GitLab", Formats: []Format{{"glpat-", shapeB64url + ".", 20}}, Hosts: []string{"gitlab.com"}},
	{Name: "npm", Formats: []Format{{"npm_", shapeAlnum, 30}}, Hosts: []string{"registry.npmjs.org"}},
	{Name: "Anthropic", Formats: []Format{{"sk-ant-", shapeB64url, 20}}, Hosts: []string{"api.anthropic.com"}},
	{Name: "OpenAI", Formats: []Format{{"sk-proj-", shapeB64url, 20}, {"sk-svcacct-", shapeB64url, 20}, {"sk-admin-", shapeB64url, 20}, {"sk-", shapeB64url, 20}},
		Hosts: []string{"api.openai.com"}},
	{Name: "Slack", Formats: []Format{{"xoxb-", shapeAlnum + "-", 10}, {"xoxp-", shapeAlnum + "-", 10}, {"xoxa-", shapeAlnum + "-", 10}, {"xoxs-", shapeAlnum + "-", 10}},
		Hosts: []string{"slack.com"}},
}

// unservable are formats recognised only to say why they stay injected:
// the proxy puts a value into request headers, and these are not used
// that way.
var unservable = []struct {
	prefixes []string
	why      string
}{
	{[]string{"AKIA", "ASIA"}, "an AWS access key: AWS requests are signed (SigV4) with the secret key inside the command, which a proxy cannot swap"},
	{[]string{"ghr_", "xoxr-", "xoxe-"}, "a refresh token: it is sent in a request body, which the proxy never rewrites"},
	{[]string{"-----BEGIN"}, "a private key: it is used by the command itself (SSH, signing), never sent in a request header"},
}

// A Shape is what a value's shape decides for a mapping of mode auto.
type Shape struct {
	// Masked says the value is masked, bound to Hosts.
	Masked bool
	Hosts  []string
	// Kind names what the value was recognised as ("a GitHub token", "a
	// JWT for api.example.com"), or is "" for a value of no known shape.
	Kind string
	// Why says, for an injected value, why it could not be masked.
	Why string
}

// Describe says what s decided, for a card or a report: "masked: a
// GitHub token" or "injected: ...".
func (s Shape) Describe() string {
	if s.Masked {
		return "masked: " + s.Kind
	}
	return "injected: " + s.Why
}

// ShapeOf decides how a credential of mode auto whose value is v reaches
// a command.
func ShapeOf(v string) Shape {
	for _, s := range Services {
		for _, f := range s.Formats {
			body, ok := strings.CutPrefix(v, f.Prefix)
			if ok && len(body) >= f.MinBody && strings.Trim(body, f.Body) == "" {
				return Shape{Masked: true, Hosts: append([]string{}, s.Hosts...), Kind: "a " + s.Name + " token"}
			}
		}
	}
	if jwtLike(v) {
		hosts, why := jwtAudience(v)
		if hosts == nil {
			return Shape{Kind: "a JWT", Why: "a JWT " + why + ": bind it with hosts to mask it"}
		}
		return Shape{Masked: true, Hosts: hosts, Kind: "a JWT for " + strings.Join(hosts, ", ")}
	}
	for _, u := range unservable {
		for _, p := range u.prefixes {
			if strings.HasPrefix(v, p) {
				return Shape{Why: u.why}
			}
		}
	}
	return Shape{Why: "its value has no shape Gatehouse recognises (docs/credentials.md); bind it with hosts to mask it"}
}

// jwtLike reports whether v is three base64url segments, the first two
// encoding JSON objects.
func jwtLike(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for i, p := range parts {
		if p == "" && i < 2 || strings.Trim(p, shapeB64url) != "" {
			return false
		}
	}
	return strings.HasPrefix(parts[0], "eyJ") && strings.HasPrefix(parts[1], "eyJ")
}

// jwtAudience returns the hosts of the https URLs v's "aud" claim names,
// or nil and why it names none usable. The claim is not verified: it only
// chooses where the value may go, and a value the operator stored is
// trusted that far.
func jwtAudience(v string) ([]string, string) {
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(v, ".")[1])
	if err != nil {
		return nil, "whose payload does not decode"
	}
	var claims struct {
		Aud json.RawMessage `json:"aud"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return nil, "whose payload is not a JSON object"
	}
	var auds []string
	if json.Unmarshal(claims.Aud, &auds) != nil {
		var one string
		if json.Unmarshal(claims.Aud, &one) != nil {
			return nil, "without an audience (aud)"
		}
		auds = []string{one}
	}
	if len(auds) == 0 || len(auds) > 8 {
		return nil, "without a usable audience (aud)"
	}
	var hosts []string
	for _, a := range auds {
		h, ok := audienceHost(a)
		if !ok {
			return nil, "whose audience (aud) is not an https URL"
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts, ""
}

// audienceHost returns the host (with its port, when not 443) of an https
// URL naming a DNS name.
func audienceHost(a string) (string, bool) {
	u, err := url.Parse(a)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return "", false
	}
	h := strings.ToLower(u.Hostname())
	if h == "" || net.ParseIP(h) != nil || !strings.Contains(h, ".") || strings.Trim(h, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" ||
		strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", false
	}
	if p := u.Port(); p != "" && p != "443" {
		return h + ":" + p, true
	}
	return h, true
}
