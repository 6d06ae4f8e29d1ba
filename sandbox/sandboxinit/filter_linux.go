package sandboxinit

import "github.com/gatehouse-dev/gatehouse/sandbox/seccomp"

func installFilter(allowPtrace bool) error {
	return seccomp.Install(seccomp.Options{AllowPtrace: allowPtrace})
}
