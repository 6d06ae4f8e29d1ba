// Package assets holds the files Gatehouse embeds in its binary.
package assets

import _ "embed"

// DefaultConfig is the built-in configuration, the bottom layer under the
// managed and user files. It is commented YAML and doubles as the reference
// documentation of every setting. Callers must not modify it.
//
//go:embed defaults.yaml
var DefaultConfig []byte
