package policy

// Small shims so the tests can reach the embedded defaults and YAML decoding.

import (
	"github.com/gatehouse-dev/gatehouse/assets"
	"go.yaml.in/yaml/v3"
)

func defaultsYAML() []byte { return assets.DefaultConfig }

func yamlUnmarshal(s string, v any) error { return yaml.Unmarshal([]byte(s), v) }
