package service

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// ExplainCall decides req as Execute would under the configuration in
// force, with this service's approvals (an ask says it would be held),
// and runs, waits for and records nothing.
func (s *Service) ExplainCall(ctx context.Context, req api.ExecRequest) (*api.ExplainResponse, error) {
	x, err := s.gen.Load().ex.Explain(ctx, req)
	var ae *pipeline.ArgError
	switch {
	case errors.As(err, &ae):
		return &api.ExplainResponse{Error: &api.StreamError{Kind: api.ErrArgument, Arg: ae.Arg, Message: ae.Msg}}, nil
	case err != nil:
		return nil, err
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return &api.ExplainResponse{Explanation: b}, nil
}
