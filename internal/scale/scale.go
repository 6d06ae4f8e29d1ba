// Package scale is the shape of Gatehouse's enumerated settings: an
// ordered table of names, from the widest to the narrowest. Validation
// lists the names in that order, and managed narrowing ranks by it: a
// user value must rank at least as high as the managed one. Values of one
// step are peers (bubblewrap and seatbelt), neither narrower than the
// other.
package scale

import "strings"

// A Scale is a vocabulary ordered from the widest value to the narrowest.
type Scale struct {
	names []string
	rank  []int
}

// Step is one rank of a scale: its values, peers of each other.
type Step []string

// Of builds a scale from its steps, the widest first.
func Of(steps ...Step) Scale {
	var s Scale
	for r, step := range steps {
		for _, n := range step {
			s.names = append(s.names, n)
			s.rank = append(s.rank, r)
		}
	}
	return s
}

// Names returns the values, the widest first.
func (s Scale) Names() []string { return append([]string(nil), s.names...) }

// Has reports whether v is one of the values.
func (s Scale) Has(v string) bool {
	_, ok := s.Rank(v)
	return ok
}

// Rank returns v's rank, higher being narrower, and whether v is a value.
func (s Scale) Rank(v string) (int, bool) {
	for i, n := range s.names {
		if n == v {
			return s.rank[i], true
		}
	}
	return 0, false
}

// String lists the values for messages: "a, b, c".
func (s Scale) String() string { return strings.Join(s.names, ", ") }

// Ranks writes the scale as documentation does: "none < auto < bubblewrap,
// seatbelt".
func (s Scale) Ranks() string {
	var b strings.Builder
	for i, n := range s.names {
		switch {
		case i == 0:
		case s.rank[i] == s.rank[i-1]:
			b.WriteString(", ")
		default:
			b.WriteString(" < ")
		}
		b.WriteString(n)
	}
	return b.String()
}
