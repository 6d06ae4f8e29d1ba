package policy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Byte size units. The binary units (KiB...) are powers of 1024, the decimal
// ones (KB...) powers of 1000, as in IEC 80000-13.
const (
	B   ByteSize = 1
	KiB ByteSize = 1 << 10
	MiB ByteSize = 1 << 20
	GiB ByteSize = 1 << 30
	TiB ByteSize = 1 << 40
	KB  ByteSize = 1000
	MB  ByteSize = 1000 * KB
	GB  ByteSize = 1000 * MB
	TB  ByteSize = 1000 * GB
)

// byteUnits lists the units ParseByteSize accepts and String chooses from.
var byteUnits = []struct {
	name string
	size ByteSize
}{
	{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB},
	{"TB", TB}, {"GB", GB}, {"MB", MB}, {"KB", KB},
	{"B", B},
}

// sizeForms explains the accepted forms; it ends most parse errors.
const sizeForms = "want an integer number of bytes or an integer with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), like 512MiB"

// ParseByteSize parses a size written as an integer number of bytes ("4096")
// or as an integer followed by a unit ("512KiB", "4GiB", "1GB"); a space may
// separate the two. Units are case-sensitive. Negative, fractional and
// overflowing sizes are errors.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative; %s", s, sizeForms)
	}
	if num == "" {
		return 0, fmt.Errorf("%q is not a size; %s", s, sizeForms)
	}
	if strings.HasPrefix(unit, ".") {
		return 0, fmt.Errorf("%q is not a whole number; %s", s, sizeForms)
	}
	mult := B
	if unit != "" {
		found := false
		for _, u := range byteUnits {
			if u.name == unit {
				mult, found = u.size, true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%q has an unknown unit %q; %s", s, unit, sizeForms)
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return ByteSize(n) * mult, nil
}

// String formats b exactly, with the unit that gives the smallest number
// (binary units first on a tie): 1048576 is "1MiB", 8000000000 is "8GB",
// 1536 is "1536B". ParseByteSize reads the result back to b.
func (b ByteSize) String() string {
	best := byteUnits[len(byteUnits)-1] // B divides everything
	for _, u := range byteUnits {
		if b%u.size == 0 && abs(b/u.size) < abs(b/best.size) {
			best = u
		}
	}
	return strconv.FormatInt(int64(b/best.size), 10) + best.name
}

func abs(b ByteSize) ByteSize {
	if b < 0 {
		return -b
	}
	return b
}

// UnmarshalYAML reads a size from a YAML integer or string; see
// ParseByteSize.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := decodeByteSize(n)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalYAML writes b in the form String returns.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// decodeByteSize reads a size from a scalar node: an integer (in any YAML
// integer syntax) or a string with a unit.
func decodeByteSize(n *yaml.Node) (ByteSize, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == nullTag {
		return 0, errors.New("want a size, got " + describe(n))
	}
	switch n.ShortTag() {
	case intTag:
		var v int64
		if err := n.Decode(&v); err != nil {
			return 0, fmt.Errorf("%q is too large", n.Value)
		}
		if v < 0 {
			return 0, fmt.Errorf("%q is negative; %s", n.Value, sizeForms)
		}
		return ByteSize(v), nil
	case strTag:
		return ParseByteSize(n.Value)
	}
	return 0, fmt.Errorf("%q is not a size; %s", n.Value, sizeForms)
}
