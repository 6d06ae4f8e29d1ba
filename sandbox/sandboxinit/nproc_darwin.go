package sandboxinit

import "errors"

// setNProc: macOS plans no RLIMIT_NPROC (the sandbox-exec stage is told
// none), so a plan that asks for one is refused.
func setNProc(n, base int64) error { return errors.New("not supported on this platform") }
