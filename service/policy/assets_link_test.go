package policy

import "github.com/gatehouse-dev/gatehouse/assets"

func defaultsYAML() []byte { return assets.DefaultConfig }
