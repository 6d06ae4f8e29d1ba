package gemini

import "github.com/gatehouse-dev/gatehouse/internal/jsonobj"

// compact is a settings text without its whitespace, for comparing.
func compact(b []byte) []byte { return jsonobj.Compact(b) }
