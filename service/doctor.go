package service

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// doctorTimeout bounds one run of doctor: it starts a probe sandbox.
const doctorTimeout = 2 * time.Minute

// Doctor runs gatehouse doctor now (Options.Doctor), one run at a time,
// and returns its report: what GET /v1/doctor serves and the dashboard
// and the tray render.
func (s *Service) Doctor(ctx context.Context) (*api.DoctorReport, error) {
	if s.opts.Doctor == nil {
		return nil, errors.New("this service runs no doctor; run gatehouse doctor in a terminal")
	}
	s.doctorMu.Lock()
	defer s.doctorMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	return s.opts.Doctor(ctx, s.Status(ctx)), nil
}
