package doctor

// An Agent is the settings of an agent besides Claude Code as doctor read
// them (the agents 'gatehouse install --agent' knows), and how they drifted
// from Gatehouse's policy. Each agent's reader is in its own file and is
// listed once, in agentReaders.
type Agent struct {
	// Name is the agent as --agent names it; Label the fact's label.
	Name  string `json:"name"`
	Label string `json:"label"`
	// Files are the settings files read, for the fact.
	Files []string `json:"files"`
	// Used says the agent is set up here (its settings exist): only then
	// are its findings worth saying.
	Used bool `json:"used"`
	// Installed says Gatehouse's hook is in its settings: its shell
	// commands then wait for the service.
	Installed bool           `json:"installed"`
	Drift     []AgentFinding `json:"drift"`
	// Note is what the fact adds about how the agent's commands reach
	// Gatehouse, when it is not by the hook's rewrite (Cursor's).
	Note string `json:"note,omitempty"`
}

// An AgentFinding is one way an agent's settings drifted, with the remedy.
type AgentFinding struct {
	Code   string `json:"code"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy"`
}

// agentReaders read each agent's settings, in the order doctor says them.
var agentReaders = []func(Options) Agent{
	readGemini,
	readCodex,
	readCursor,
}

func readAgents(o Options) []Agent {
	out := []Agent{}
	for _, read := range agentReaders {
		out = append(out, read(o))
	}
	return out
}
