package decide

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/pipeline"
)

// The hook names the pipeline's denial codes without linking it.
func TestDenialCodesArePipelines(t *testing.T) {
	if denyCwdOutside != pipeline.DenyCwdOutside || denySandboxUnavailable != pipeline.DenySandboxUnavailable {
		t.Errorf("hook/decide's denial codes %q, %q differ from service/pipeline's %q, %q",
			denyCwdOutside, denySandboxUnavailable, pipeline.DenyCwdOutside, pipeline.DenySandboxUnavailable)
	}
}
