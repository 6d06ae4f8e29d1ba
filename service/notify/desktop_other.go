//go:build !linux

package notify

func checkSession() error { return nil }

// forServer returns body unchanged: only freedesktop servers read markup.
func forServer(body string) string { return body }
