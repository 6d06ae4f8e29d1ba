package api

import "encoding/json"

// PathExplain decides a request as an execution would, through the same
// order, and runs, waits for and records nothing (gatehouse explain).
const PathExplain = "/v1/explain"

// ExplainResponse answers an explain request: the pipeline's explanation
// (what gatehouse explain --json prints: decision, blocked_by, reason,
// hint, held, the analysis and its tree), or the bad argument.
type ExplainResponse struct {
	Explanation json.RawMessage `json:"explanation,omitempty"`
	Error       *StreamError    `json:"error,omitempty"`
}
