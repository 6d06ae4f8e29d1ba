package policy_test

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/service/policy"
)

func ExampleLoad() {
	l, err := policy.Load(policy.LoadOptions{
		ManagedFile: "testdata/managed.yaml",
		UserFile:    "testdata/example.yaml",
		Home:        "/home/u",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, field := range []string{"policy.exec_timeout_seconds", "exec.limits.memory_max", "policy.workspace_roots", "exec.sandbox.deny_read", "exec.shell"} {
		fmt.Printf("%s from %v\n", field, l.Sources[field])
	}
	fmt.Println(l.Config.Policy.WorkspaceRoots, l.Config.Exec.Limits.MemoryMax, l.Config.TimeoutCeiling())
	// Output:
	// policy.exec_timeout_seconds from testdata/example.yaml:6
	// exec.limits.memory_max from testdata/example.yaml:4
	// policy.workspace_roots from testdata/example.yaml:7
	// exec.sandbox.deny_read from testdata/managed.yaml:8
	// exec.shell from testdata/managed.yaml:3
	// [/home/u/src/gatehouse] 2GiB 60
}

func ExampleCheck() {
	_, err := policy.Check("testdata/bad.yaml", policy.LoadOptions{
		ManagedFile: "testdata/managed.yaml",
		Home:        "/home/u",
	})
	fmt.Println(err)
	// Output:
	// testdata/bad.yaml:2: exec.shell: "/bin/zsh" differs from the managed value "/bin/bash" (testdata/managed.yaml:3); only "/bin/bash" is allowed
	// testdata/bad.yaml:3: exec.sandbx: unknown field; known fields are enabled, shell, default_cwd, sandbox, limits, env, egress, credentials, audit, notify, output, dashboard
	// testdata/bad.yaml:6: exec.limits.tmpfs_size: "lots" is not a size; want an integer number of bytes or an integer with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), like 512MiB
	// testdata/bad.yaml:8: policy.exec_timeout_seconds: 0 is out of range; want 1 to 3600
}
