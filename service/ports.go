package service

import "github.com/gatehouse-dev/gatehouse/service/api"

// Ports lists the agent sessions' shared networks: what listens in each
// and the ports the person opened on the host.
func (s *Service) Ports() []api.SessionNetwork { return s.sessions.List() }

// OpenPort forwards a session's port to the host's loopback. The admission
// API's callers are the person's faces (the CLI, the tray, the
// dashboard); no agent's tool offers it.
func (s *Service) OpenPort(req api.PortRequest) api.PortResponse {
	r := s.sessions.OpenPort(req)
	if r.Forward != nil {
		s.hub.publish(api.StreamNotice{Type: api.NoticePorts})
	}
	return r
}

// ClosePort ends a forward.
func (s *Service) ClosePort(req api.PortRequest) api.PortResponse {
	r := s.sessions.ClosePort(req)
	if r.Forward != nil {
		s.hub.publish(api.StreamNotice{Type: api.NoticePorts})
	}
	return r
}
