package keyring

import (
	"context"
	"slices"
	"strings"

	"github.com/danieljoos/wincred"
)

// preflight has nothing to check on Windows: the Credential Manager is
// always there for a logged-in user.
func preflight(context.Context) error { return nil }

// list keeps the generic credentials go-keyring wrote for this service
// (target "service:name").
func (s *OS) list(context.Context) ([]string, error) {
	creds, err := wincred.List()
	if err != nil {
		return nil, err
	}
	prefix := s.service + ":"
	var names []string
	for _, c := range creds {
		if n, ok := strings.CutPrefix(c.TargetName, prefix); ok && n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

func platformDescribe(error) (string, bool) { return "", false }
