// Package layout holds no code: its test keeps the tree's shape
// (docs/layout.md), such as no Go file growing past one idea.
package layout
