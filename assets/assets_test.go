package assets

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	// service/policy tests the content; here it must simply be YAML.
	var v map[string]any
	if err := yaml.Unmarshal(DefaultConfig, &v); err != nil {
		t.Fatalf("defaults.yaml: %v", err)
	}
	for _, section := range []string{"exec", "policy"} {
		if _, ok := v[section]; !ok {
			t.Errorf("defaults.yaml has no %s section", section)
		}
	}
}
