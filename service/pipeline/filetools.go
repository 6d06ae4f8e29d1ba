package pipeline

import (
	"github.com/gatehouse-dev/gatehouse/keyring"
	"github.com/gatehouse-dev/gatehouse/service/broker"
)

// What the service needs of an Executor to judge an agent's own file
// tools (service/fileaccess.go) and clean their output
// (service/tooloutput.go).

// CredentialDir returns where the executions' credential directories are
// made: each holds a command's credential files while it runs.
func (e *Executor) CredentialDir() string {
	if e.opts.CredentialDir != "" {
		return e.opts.CredentialDir
	}
	return broker.DefaultDir("")
}

// ToolCacheRoot returns the directory that holds every agent's tool
// cache; "" when commands get none.
func (e *Executor) ToolCacheRoot() string { return e.opts.ToolCacheRoot }

// Keyring returns the keychain credentials are read from; nil when none
// is configured.
func (e *Executor) Keyring() keyring.Store { return e.opts.Keyring }
