package broker

// DirGlobs returns patterns ("*" within one path element) that match
// DefaultDir for every user on goos: under each user's $XDG_RUNTIME_DIR as
// systemd makes it (/run/user/<uid>), and in the temporary directory
// (/tmp, or macOS's per-user /var/folders/…/T). Managed settings, which
// serve every user, name the credential directories by them.
func DirGlobs(goos string) []string {
	switch goos {
	case "windows":
		return nil
	case "darwin":
		return []string{"/private/var/folders/*/*/T/gatehouse-cred-*", "/var/folders/*/*/T/gatehouse-cred-*", "/private/tmp/gatehouse-cred-*", "/tmp/gatehouse-cred-*"}
	}
	return []string{"/run/user/*/gatehouse-cred", "/tmp/gatehouse-cred-*"}
}
