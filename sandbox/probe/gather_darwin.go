package probe

import "os"

func gatherOS(f *Facts, _ string) {
	// Seatbelt is used through sandbox-exec, which every macOS ships.
	_, err := os.Stat("/usr/bin/sandbox-exec")
	f.SandboxExecFound = err == nil
}
