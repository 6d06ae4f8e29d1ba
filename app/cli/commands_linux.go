package cli

// platformCommands are the commands only Linux has: the sandbox's stage
// 1 and 2 entry points.
func platformCommands() []*command { return []*command{sandboxInitCmd, sandboxExecCmd} }
