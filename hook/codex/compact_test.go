package codex

import "github.com/gatehouse-dev/gatehouse/internal/jsonobj"

// compact is a hooks file's text without its whitespace, for comparing.
func compact(b []byte) []byte { return jsonobj.Compact(b) }
