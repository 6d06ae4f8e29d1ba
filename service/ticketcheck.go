package service

import "github.com/gatehouse-dev/gatehouse/service/api"

// CheckTicket says whether req's ticket is live for req's agent session:
// issued by this service on a hook's decision for that agent and session,
// pending, neither redeemed nor expired. It redeems nothing. Claude Code's
// PermissionRequest hook lets a relay run outside Claude Code's sandbox
// only when it is.
func (s *Service) CheckTicket(req api.TicketCheckRequest) api.TicketCheckResponse {
	r, err := s.tickets.Peek(req.Ticket)
	if err != nil {
		return api.TicketCheckResponse{Reason: err.Error()}
	}
	got := r.d.Request()
	if req.SessionID == "" || got.SessionID != req.SessionID || got.Agent != req.Agent || got.Surface != api.SurfaceAgentHook {
		return api.TicketCheckResponse{Reason: "the ticket was issued to another agent session"}
	}
	return api.TicketCheckResponse{Live: true}
}
