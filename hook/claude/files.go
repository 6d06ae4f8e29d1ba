package claude

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/service/api"
)

// FileAccess is what one file-tool call touches.
type FileAccess struct {
	Tool   string
	Access string // api.FileRead or api.FileWrite
	// Search is a recursive search (Glob, Grep).
	Search bool
	// Paths are as the model gave them (Claude Code makes them absolute;
	// a relative one is relative to the input's cwd). A Glob or Grep
	// without a path searches the cwd, which is then the path.
	Paths []string
}

// IsFileTool reports whether tool is one of FileTools.
func IsFileTool(tool string) bool { return slices.Contains(FileTools, tool) }

// FileAccess decodes the paths a file tool's input names. Every field that
// names a place is read: Read, Write, Edit and MultiEdit's file_path,
// NotebookEdit's notebook_path, Glob and Grep's path (the cwd when absent)
// and Glob's pattern up to its first wildcard, since a pattern like
// "../../.ssh/*" or "/home/u/.ssh/*" reaches outside its path.
func (in *Input) FileAccess() (*FileAccess, error) {
	fa := &FileAccess{Tool: in.ToolName}
	switch in.ToolName {
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit":
		key := "file_path"
		if in.ToolName == "NotebookEdit" {
			key = "notebook_path"
		}
		p, err := in.stringField(key, true)
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, fmt.Errorf("tool_input.%s is empty", key)
		}
		fa.Access, fa.Paths = api.FileWrite, []string{p}
		if in.ToolName == "Read" {
			fa.Access = api.FileRead
		}
	case "Glob", "Grep":
		p, err := in.stringField("path", false)
		if err != nil {
			return nil, err
		}
		if p == "" {
			p = in.Cwd
		}
		fa.Access, fa.Search, fa.Paths = api.FileRead, true, []string{p}
		if in.ToolName == "Glob" {
			pat, err := in.stringField("pattern", true)
			if err != nil {
				return nil, err
			}
			if pre := GlobPrefix(pat); pre != "" {
				if !path.IsAbs(pre) {
					// Not cleaned: ".." after a symlink is the service's to
					// resolve.
					pre = strings.TrimSuffix(p, "/") + "/" + pre
				}
				fa.Paths = append(fa.Paths, pre)
			}
		}
	default:
		return nil, fmt.Errorf("%s is not a file tool", in.ToolName)
	}
	return fa, nil
}

// GlobPrefix returns the directories of pattern before its first element
// with a wildcard ("src/*.go" gives "src", "/etc/**" gives "/etc", "*.go"
// gives ""). Every element is kept, ".." included: the prefix names where
// the search starts.
func GlobPrefix(pattern string) string {
	elems := strings.Split(pattern, "/")
	n := 0
	for n < len(elems)-1 && !strings.ContainsAny(elems[n], `*?[]{}\`) {
		n++
	}
	pre := strings.Join(elems[:n], "/")
	if pre == "" && strings.HasPrefix(pattern, "/") {
		return "/"
	}
	return pre
}
