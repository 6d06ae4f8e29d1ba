//go:build !linux

package limits

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Detect reports that there is no cgroup delegation: cgroups are Linux-only.
func Detect() Delegation {
	return Delegation{Reason: "cgroups are Linux-only"}
}

// NewGroup returns an error wrapping sandbox.ErrUnavailable: cgroups are
// Linux-only.
func (d Delegation) NewGroup(name string, memoryMax, pidsMax int64) (*Group, error) {
	return nil, fmt.Errorf("%w: cgroups are Linux-only", sandbox.ErrUnavailable)
}

// FD returns an error wrapping sandbox.ErrUnavailable: cgroups are
// Linux-only.
func (g *Group) FD() (int, error) {
	return -1, fmt.Errorf("%w: cgroups are Linux-only", sandbox.ErrUnavailable)
}
