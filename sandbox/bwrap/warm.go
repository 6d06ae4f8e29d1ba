package bwrap

import "errors"

// ErrPlanChanged says a warm sandbox was started for another mount plan
// than the command's (a repository appeared, a deny-read path changed):
// nothing ran, and the sandbox is discarded.
var ErrPlanChanged = errors.New("the mount plan changed since the warm sandbox started")

// ErrWarmGone says a warm sandbox's bwrap ended before its command came.
var ErrWarmGone = errors.New("the warm sandbox ended before its command came")
