package e2e

import "testing"

// What Gatehouse refused while a routed command ran reaches the model in
// the tool_result, after the command's own errors: the proxy's refusal of
// a host, not only curl's 403; the deny-read directory, not only "No such
// file or directory".
func TestRefusalsReachTheModel(t *testing.T) {
	w := newWorld(t)
	w.StartService()
	w.Gatehouse("install", "--no-service")
	res, _ := w.runClaude(w.Workspace, w.sandboxSettings(false), map[string]any{
		"command":     "curl -sS https://example.com/; cat ~/.ssh/id_e2e",
		"description": "e2e",
	})
	contains(t, "tool_result", res.Content,
		"gatehouse: egress to example.com:443 refused (not in policy.egress_allowlist)",
		"gatehouse: ~/.ssh is hidden from commands (deny-read)")
}
