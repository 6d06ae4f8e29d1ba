//go:build !linux

package notify

import "errors"

// ActionPrompter is the freedesktop notification service's; elsewhere
// approvals are raised without actions (PlainPrompter).
type ActionPrompter struct{ PlainPrompter }

// NewActionPrompter fails: this platform has no freedesktop notification
// actions.
func NewActionPrompter() (*ActionPrompter, error) {
	return nil, errors.New("notification actions are a freedesktop feature")
}

// Shutdown implements nothing here.
func (p *ActionPrompter) Shutdown() {}
