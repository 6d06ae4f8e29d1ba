package assets

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The tray's icons (tray/*.png) are drawn here: a shield whose colour and
// mark say the state at a glance, with a dot when an approval waits. The
// committed files must be what this draws; go test ./assets -update
// writes them again.

var update = flag.Bool("update", false, "write the tray icons again")

// iconSize is the icons' width and height in pixels; status-notifier hosts
// and menu bars scale them to the panel.
const iconSize = 32

type trayState struct {
	name string
	fill color.NRGBA // the shield's colour; zero for an outline only
	mark func(x, y float64) float64
}

var trayStates = []trayState{
	{"protected", color.NRGBA{0x2e, 0x9d, 0x4f, 0xff}, checkMark},
	{"degraded", color.NRGBA{0xe8, 0x9a, 0x0c, 0xff}, bangMark},
	{"denied", color.NRGBA{0xd3, 0x2f, 0x2f, 0xff}, crossMark},
	{"down", color.NRGBA{}, slashMark},
}

// The two themes: the stroke is dark on a light panel, light on a dark one.
var trayThemes = []struct {
	name   string
	stroke color.NRGBA
}{
	{"light", color.NRGBA{0x30, 0x30, 0x30, 0xff}},
	{"dark", color.NRGBA{0xf0, 0xf0, 0xf0, 0xff}},
}

var badgeColour = color.NRGBA{0x1e, 0x88, 0xe5, 0xff}

func TestTrayIcons(t *testing.T) {
	for _, st := range trayStates {
		for _, th := range trayThemes {
			for _, badge := range []bool{false, true} {
				name := st.name
				if badge {
					name += "-badge"
				}
				name += "-" + th.name + ".png"
				img := drawIcon(st, th.stroke, badge)
				file := filepath.Join("tray", name)
				if *update {
					var b bytes.Buffer
					if err := png.Encode(&b, img); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				data, err := TrayIcons.ReadFile("tray/" + name)
				if err != nil {
					t.Errorf("%s is not embedded: %v (go test ./assets -update writes it)", file, err)
					continue
				}
				got, err := png.Decode(bytes.NewReader(data))
				if err != nil {
					t.Errorf("%s: %v", file, err)
					continue
				}
				if !samePixels(got, img) {
					t.Errorf("%s is not what the test draws; go test ./assets -update writes it again", file)
				}
			}
		}
	}
}

func samePixels(a image.Image, b *image.NRGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := 0; y < iconSize; y++ {
		for x := 0; x < iconSize; x++ {
			if color.NRGBAModel.Convert(a.At(x, y)) != b.NRGBAAt(x, y) {
				return false
			}
		}
	}
	return true
}

// drawIcon renders one icon, four by four samples a pixel.
func drawIcon(st trayState, stroke color.NRGBA, badge bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	const n = 4
	for py := 0; py < iconSize; py++ {
		for px := 0; px < iconSize; px++ {
			var r, g, b, a float64
			for sy := 0; sy < n; sy++ {
				for sx := 0; sx < n; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/n) / iconSize
					y := (float64(py) + (float64(sy)+0.5)/n) / iconSize
					c := sample(st, stroke, badge, x, y)
					fa := float64(c.A) / 255
					r += float64(c.R) * fa
					g += float64(c.G) * fa
					b += float64(c.B) * fa
					a += fa
				}
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(math.Round(r / a)), G: uint8(math.Round(g / a)), B: uint8(math.Round(b / a)),
				A: uint8(math.Round(255 * a / (n * n))),
			})
		}
	}
	return img
}

// sample is the colour at (x, y), both in [0, 1].
func sample(st trayState, stroke color.NRGBA, badge bool, x, y float64) color.NRGBA {
	if badge {
		d := math.Hypot(x-0.8, y-0.2)
		switch {
		case d < 0.16:
			return badgeColour
		case d < 0.22:
			return color.NRGBA{} // a gap keeps the dot apart from the shield
		}
	}
	edge := shieldEdge(x, y)
	switch {
	case edge > 0:
		return color.NRGBA{}
	case edge > -0.06:
		return stroke
	}
	if st.mark(x, y) < 0.055 {
		if st.fill.A == 0 {
			return stroke
		}
		return color.NRGBA{0xff, 0xff, 0xff, 0xff}
	}
	return st.fill
}

// shieldEdge is about the distance from (x, y) to the shield's outline:
// negative inside, positive outside.
func shieldEdge(x, y float64) float64 {
	const top, bottom, half = 0.08, 0.94, 0.38
	dx := math.Abs(x-0.5) - halfWidth(y, top, bottom, half)
	dy := top - y
	if y > bottom {
		dy = y - bottom
	}
	return math.Max(dx, dy)
}

// halfWidth is the shield's half width at height y: straight sides down
// to the middle, then a curve to the point.
func halfWidth(y, top, bottom, half float64) float64 {
	const mid = 0.45
	if y < mid {
		return half
	}
	f := (y - mid) / (bottom - mid)
	return half * math.Max(0, 1-f*f)
}

func checkMark(x, y float64) float64 {
	return math.Min(segment(x, y, 0.32, 0.48, 0.45, 0.62), segment(x, y, 0.45, 0.62, 0.68, 0.34))
}

func bangMark(x, y float64) float64 {
	return math.Min(segment(x, y, 0.5, 0.24, 0.5, 0.52), segment(x, y, 0.5, 0.68, 0.5, 0.68))
}

func crossMark(x, y float64) float64 {
	return math.Min(segment(x, y, 0.35, 0.3, 0.65, 0.62), segment(x, y, 0.65, 0.3, 0.35, 0.62))
}

func slashMark(x, y float64) float64 {
	return segment(x, y, 0.3, 0.7, 0.7, 0.3)
}

// segment is the distance from (x, y) to the segment from a to b.
func segment(x, y, ax, ay, bx, by float64) float64 {
	vx, vy := bx-ax, by-ay
	t := 0.0
	if l := vx*vx + vy*vy; l > 0 {
		t = math.Max(0, math.Min(1, ((x-ax)*vx+(y-ay)*vy)/l))
	}
	return math.Hypot(x-(ax+t*vx), y-(ay+t*vy))
}
