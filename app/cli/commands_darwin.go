package cli

// platformCommands are the commands only macOS has: the sandbox's stage 2
// entry point.
func platformCommands() []*command { return []*command{sandboxExecCmd} }
