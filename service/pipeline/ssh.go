package pipeline

// This file gives ssh, and so git, a way out of the sandbox: the network
// namespace has no route, and ssh speaks neither of the proxy's
// protocols. Each execution's proxy directory (bound read-only at
// /run/gatehouse/egress) gets an ssh configuration whose ProxyCommand is
// the init's connect mode, a tunnel through the bridge, so that the
// egress proxy decides every ssh destination as it decides any other
// (policy.egress_allowlist, approvals) and the card attributes it. Host
// keys are checked against a copy of the user's ~/.ssh/known_hosts, the
// only thing of ~/.ssh the sandbox sees; keys come from the keychain as
// credential files of kind ssh_key, never from ~/.ssh.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/service/broker"
)

// Paths and variables of the sandbox's ssh configuration.
const (
	// SSHConfigInSandbox is the generated configuration ($GATEHOUSE_SSH_CONFIG).
	SSHConfigInSandbox = sandbox.EgressDirInSandbox + "/" + sshConfigName
	// KnownHostsInSandbox is the copy of the user's ~/.ssh/known_hosts.
	KnownHostsInSandbox = sandbox.EgressDirInSandbox + "/" + knownHostsName
	// SSHConfigEnv names the configuration, for ssh run directly
	// (ssh -F "$GATEHOUSE_SSH_CONFIG" host).
	SSHConfigEnv = "GATEHOUSE_SSH_CONFIG"

	sshConfigName  = "ssh_config"
	knownHostsName = "known_hosts"
	// maxKnownHosts bounds the copy of known_hosts; a larger file is
	// not copied, and every host is unknown.
	maxKnownHosts = 16 << 20
)

// sshConfig writes the ssh configuration and the known_hosts copy into
// dir, the execution's proxy directory, and points git at it
// (GIT_SSH_COMMAND, unless the request or a mapping set it) and the
// command's own ssh (GATEHOUSE_SSH_CONFIG). lease's ssh_key files are its
// identities. Only a backend with its own network and bound paths gets
// it: the bridge and the init are where the configuration says.
func (e *Executor) sshConfig(spec *sandbox.Spec, dir string, lease *broker.Lease) error {
	var keys []string
	if lease != nil {
		keys = lease.SSHKeys
	}
	// In a session's shared network each execution's bridge has a port
	// of its own.
	bridge := bwrap.BridgeAddr
	if spec.Network != nil && spec.Network.Bridge != "" {
		bridge = spec.Network.Bridge
	}
	if err := os.WriteFile(filepath.Join(dir, sshConfigName), []byte(sshConfigText(keys, bridge)), 0o644); err != nil {
		return fmt.Errorf("writing the sandbox's ssh configuration: %w", err)
	}
	known, err := readKnownHosts(filepath.Join(e.opts.Home, ".ssh", knownHostsName))
	if err != nil {
		e.opts.Logger.Warn("the sandbox's known_hosts is empty", "err", err)
	}
	if err := os.WriteFile(filepath.Join(dir, knownHostsName), known, 0o644); err != nil {
		return fmt.Errorf("writing the sandbox's known_hosts: %w", err)
	}
	add := []string{SSHConfigEnv + "=" + SSHConfigInSandbox}
	if !hasEnv(spec.Env, "GIT_SSH_COMMAND") {
		add = append(add, "GIT_SSH_COMMAND=ssh -F "+SSHConfigInSandbox)
	}
	spec.Env = mergeEnv(spec.Env, add)
	return nil
}

// sshConfigText is the sandbox's ssh configuration with keys (paths in
// the sandbox) as its identities, tunnelling through the bridge at bridge
// (host:port).
func sshConfigText(keys []string, bridge string) string {
	var b strings.Builder
	b.WriteString("# Gatehouse: ssh in this sandbox reaches hosts through the egress proxy,\n" +
		"# where the egress allowlist (or a person's answer) allows them.\n" +
		"Host *\n" +
		"  ProxyCommand " + sandbox.InitInSandbox + " connect " + bridge + " %h %p\n" +
		"  UserKnownHostsFile " + KnownHostsInSandbox + "\n" +
		"  StrictHostKeyChecking yes\n" +
		"  UpdateHostKeys no\n" +
		"  BatchMode yes\n" +
		"  IdentityAgent none\n" +
		"  ControlMaster no\n" +
		"  ControlPath none\n" +
		"  IdentitiesOnly yes\n")
	for _, k := range keys {
		b.WriteString("  IdentityFile " + k + "\n")
	}
	return b.String()
}

// readKnownHosts returns the user's known_hosts, or nothing when there is
// none (or it is too large to copy: the error says so).
func readKnownHosts(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKnownHosts+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKnownHosts {
		return nil, fmt.Errorf("%s is larger than %d MiB; not copied", path, maxKnownHosts>>20)
	}
	return b, nil
}

// hasEnv reports whether env sets key.
func hasEnv(env []string, key string) bool {
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}
