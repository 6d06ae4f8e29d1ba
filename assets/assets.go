// Package assets holds the files Gatehouse embeds in its binary.
package assets

import "embed"

// DefaultConfig is the built-in configuration, the bottom layer under the
// managed and user files. It is commented YAML and doubles as the reference
// documentation of every setting. Callers must not modify it.
//
//go:embed defaults.yaml
var DefaultConfig []byte

// TrayIcons holds the tray's icons, tray/STATE[-badge]-THEME.png: STATE is
// protected, degraded, denied or down, -badge marks an approval waiting,
// and THEME is light or dark, the panel the icon is drawn for
// (docs/tray.md). trayicons_test.go draws them.
//
//go:embed tray/*.png
var TrayIcons embed.FS

// Dashboard holds the dashboard's pages (html/template files, each with
// layout.html) and, under static/, its one script and style sheet
// (service/dashboard). Nothing is fetched from anywhere else.
//
//go:embed dashboard
var Dashboard embed.FS
