package dlp

// This file holds the anchor tables: where a pattern may start, found a
// pair of bytes at a time.

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

const filterBits = 1 << 16

type anchorTable struct {
	bits [filterBits / 64]uint64
	m    map[uint32][]int32

	// pairs says, for two bytes (as a little-endian uint16) at offsets e
	// and e+1 of the input, which of the windows starting at e-2, e-1, e
	// and e+1 may be an anchor: bit d for the window starting at e-2+d,
	// which holds the two bytes at its offsets 2-d and 3-d (the window at
	// e+1 holds only the second, as its first byte). next uses it to rule
	// windows out.
	pairs *pairTable
	first [256]bool // the first bytes of anchors, as entered in pairs
}

func hashKey(k uint32) uint32 { return (k * 2654435761) >> 16 }

func (a *anchorTable) add(key []byte, id int32) {
	k := binary.LittleEndian.Uint32(key)
	if a.m == nil {
		a.m = map[uint32][]int32{}
	}
	if slices.Contains(a.m[k], id) {
		return
	}
	a.m[k] = append(a.m[k], id)
	h := hashKey(k)
	a.bits[h>>6] |= 1 << (h & 63)

	if a.pairs == nil {
		a.pairs = new(pairTable)
	}
	pair := func(lo, hi byte) int { return int(lo) | int(hi)<<8 }
	a.pairs[pair(key[2], key[3])] |= 1
	a.pairs[pair(key[1], key[2])] |= 2
	a.pairs[pair(key[0], key[1])] |= 4
	if !a.first[key[0]] {
		// The window starting at a pair's second byte: any byte may
		// come before it.
		a.first[key[0]] = true
		for c := range 256 {
			a.pairs[pair(byte(c), key[0])] |= 8
		}
	}
}

func (a *anchorTable) hit(k uint32) bool {
	h := hashKey(k)
	return a.bits[h>>6]&(1<<(h&63)) != 0
}

// prefixSet holds the 1-, 2- and 3-byte prefixes of anchors.
type prefixSet struct {
	p1 [256]bool
	p2 [1 << 16 / 64]uint64
	p3 map[uint32]bool
}

func (p *prefixSet) add(key []byte) {
	p.p1[key[0]] = true
	k2 := uint32(key[0]) | uint32(key[1])<<8
	p.p2[k2>>6] |= 1 << (k2 & 63)
	if p.p3 == nil {
		p.p3 = map[uint32]bool{}
	}
	p.p3[uint32(key[0])|uint32(key[1])<<8|uint32(key[2])<<16] = true
}

// has reports whether b (1 to 3 bytes) begins an anchor.
func (p *prefixSet) has(b []byte) bool {
	switch len(b) {
	case 1:
		return p.p1[b[0]]
	case 2:
		k := uint32(b[0]) | uint32(b[1])<<8
		return p.p2[k>>6]&(1<<(k&63)) != 0
	case 3:
		return p.p3[uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16]
	}
	return false
}

// unitChar holds the characters of every encoding's units.
var unitChar = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")

// next returns the first position from i on whose four bytes may be an
// anchor, or -1.
//
// It looks up in pairs the two bytes at every even offset: each window is
// covered by two of the look-ups, one holding its bytes 2 and 3 (or 0 and
// 1) and one its bytes 0 and 1 (or 2 and 3), or for the odd windows bytes
// 1 and 2 and byte 0 or 3. The pairs at offsets 2 mod 4 (hi) already
// cover every window; those at 0 mod 4 (lo) are looked up only where hi
// leaves a window open, and the windows both leave open are checked
// against the filter. Binary data, runs of blanks or NUL bytes and most
// text leave no window open: 32 positions then cost eight look-ups and no
// mispredicted branch.
func (a *anchorTable) next(buf []byte, i int) int {
	if a.pairs == nil {
		return -1
	}
	pairs := a.pairs
	n := len(buf)
	// Skip what leaves no window open, 32 positions at a time, up to the
	// first block that may hold an anchor; then go on 16 at a time. After
	// an anchor the scan calls again, and skips again.
	for ; i+35 <= n; i += 32 {
		b := buf[i : i+32]
		w0 := binary.LittleEndian.Uint64(b[0:8])
		w1 := binary.LittleEndian.Uint64(b[8:16])
		w2 := binary.LittleEndian.Uint64(b[16:24])
		w3 := binary.LittleEndian.Uint64(b[24:32])
		if pairs[uint16(w0>>16)]|pairs[uint16(w0>>48)]|pairs[uint16(w1>>16)]|pairs[uint16(w1>>48)]|
			pairs[uint16(w2>>16)]|pairs[uint16(w2>>48)]|pairs[uint16(w3>>16)]|pairs[uint16(w3>>48)] != 0 {
			break
		}
	}
	for ; i+19 <= n; i += 16 {
		b := buf[i : i+19]
		w0 := binary.LittleEndian.Uint64(b[0:8])
		w1 := binary.LittleEndian.Uint64(b[8:16])
		m := pairs.hi(w0, w1)
		if m == 0 {
			continue
		}
		if m &= pairs.lo(w0, w1, uint64(binary.LittleEndian.Uint16(b[16:18]))); m != 0 {
			if j := a.check(buf, i, m); j >= 0 {
				return j
			}
		}
	}
	for ; i+4 <= n; i++ {
		if a.hit(binary.LittleEndian.Uint32(buf[i : i+4])) {
			return i
		}
	}
	return -1
}

// pairTable is anchorTable.pairs.
type pairTable [1 << 16]uint8

// hi returns which of the 16 windows starting at the bytes w0, w1 (eight
// each, little-endian) the pairs at offsets 2, 6, 10 and 14 leave open:
// bit d for window d.
func (p *pairTable) hi(w0, w1 uint64) uint32 {
	return uint32(p[uint16(w0>>16)]) | uint32(p[uint16(w0>>48)])<<4 |
		uint32(p[uint16(w1>>16)])<<8 | uint32(p[uint16(w1>>48)])<<12
}

// lo is hi for the pairs at offsets 0, 4, 8, 12 and 16 (the first two
// bytes of w2), which cover windows -2 to 17.
func (p *pairTable) lo(w0, w1, w2 uint64) uint32 {
	return (uint32(p[uint16(w0)]) | uint32(p[uint16(w0>>32)])<<4 |
		uint32(p[uint16(w1)])<<8 | uint32(p[uint16(w1>>32)])<<12 |
		uint32(p[uint16(w2)])<<16) >> 2
}

// check returns the first window i+d, for the bits d of m, that the filter
// lets through, or -1.
func (a *anchorTable) check(buf []byte, i int, m uint32) int {
	for ; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros32(m)
		if a.hit(binary.LittleEndian.Uint32(buf[j : j+4])) {
			return j
		}
	}
	return -1
}
