package assemble

import (
	"os"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
	"github.com/gatehouse-dev/gatehouse/service/trust"
)

// Guard is what cfg never lets be trusted as a workspace, for the user
// of p: gatehouse workspace add and an approval's trust ask the same one.
func Guard(p Paths, cfg *policy.Config) trust.Guard {
	return trust.GuardFor(cfg, p.Home, p.TrustPrivate)
}

// Workspaces are the workspace roots of cfg, then the trusted ones, each
// with why it is not in force now when it is not: gatehouse workspace list
// and the service (under the configuration in force) answer with it.
func Workspaces(p Paths, cfg *policy.Config) ([]api.Workspace, error) {
	ws := []api.Workspace{}
	for _, r := range cfg.WorkspaceRootsEffective() {
		ws = append(ws, api.Workspace{Path: r, Origin: api.WorkspacePolicy, Problem: policyRootProblem(cfg, r, p.Home, p.Private)})
	}
	trusted, err := TrustStore(p).List()
	if err != nil {
		return nil, err
	}
	g := Guard(p, cfg)
	for _, w := range trusted {
		w.Problem = g.NotInForce(w.Path)
		ws = append(ws, w)
	}
	return ws, nil
}

// policyRootProblem says why the configured root r is not in force now,
// as the executor judges it at each execution, or returns "".
func policyRootProblem(cfg *policy.Config, r, home string, private []string) string {
	if _, err := os.Stat(r); err != nil {
		return "does not exist"
	}
	one := *cfg
	one.Policy.WorkspaceRoots = []string{r}
	if _, err := one.ResolveWorkspaceRoots(home, private); err != nil {
		return err.Error()
	}
	return ""
}
