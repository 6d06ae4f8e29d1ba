package bwrap

import "github.com/gatehouse-dev/gatehouse/sandbox"

// ErrPlanChanged and ErrWarmGone are sandbox's: a warm sandbox's refusals.
var (
	ErrPlanChanged = sandbox.ErrPlanChanged
	ErrWarmGone    = sandbox.ErrWarmGone
)
