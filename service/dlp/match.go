package dlp

// This file holds the matchers that confirm a pattern at an anchor: raw
// bytes through escapes and gaps, units of an encoding, and expressions.

// matchRaw matches the value v at buf[j:], each byte literal or escaped.
func matchRaw(v, buf []byte, j int, budget *int) (int, status) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if j >= len(buf) {
			return j, more
		}
		b := buf[j]
		if b == c && c != '%' && c != '\\' {
			j++
			continue
		}
		if b == c {
			// '%' and '\' may be literal or begin an escape: try both.
			if *budget--; *budget <= 0 {
				return j, fail
			}
			e1, st1 := matchRaw(v[i+1:], buf, j+1, budget)
			if st1 == match {
				return e1, match
			}
			k, st2 := escaped(buf, j, c)
			if k > 0 {
				e2, st3 := matchRaw(v[i+1:], buf, j+k, budget)
				switch {
				case st3 == match:
					return e2, match
				case st3 == more || st1 == more:
					return max(e1, e2), more
				}
				return j, fail
			}
			if st1 == more || st2 == more {
				return max(e1, j), more
			}
			return j, fail
		}
		k, st := escaped(buf, j, c)
		if k == 0 {
			if st == more {
				return j, more
			}
			return j, fail
		}
		j += k
	}
	return j, match
}

// escaped returns the length of an escaped form of c at buf[j:], or 0.
// The status is more when buf ends inside what may be one.
func escaped(buf []byte, j int, c byte) (int, status) {
	rest := buf[j:]
	switch rest[0] {
	case '%':
		if len(rest) < 3 {
			return 0, more
		}
		if h, ok := hexByte(rest[1], rest[2]); ok && h == c {
			return 3, match
		}
	case '+':
		if c == ' ' {
			return 1, match
		}
	case '\\':
		if len(rest) < 2 {
			return 0, more
		}
		switch rest[1] {
		case c:
			if c == '"' || c == '\\' || c == '/' || c == '\'' || c == '$' || c == '`' {
				return 2, match
			}
		case 'n':
			if c == '\n' {
				return 2, match
			}
		case 't':
			if c == '\t' {
				return 2, match
			}
		case 'r':
			if c == '\r' {
				return 2, match
			}
		case 'u':
			if len(rest) < 6 {
				return 0, more
			}
			hi, ok1 := hexByte(rest[2], rest[3])
			lo, ok2 := hexByte(rest[4], rest[5])
			if ok1 && ok2 && hi == 0 && lo == c {
				return 6, match
			}
		case 'x':
			if len(rest) < 4 {
				return 0, more
			}
			if h, ok := hexByte(rest[2], rest[3]); ok && h == c {
				return 4, match
			}
		}
	}
	return 0, fail
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// skipGap skips whitespace between two units at buf[j:]: at most maxGap
// bytes, and after a newline an offset column (six to eight hex digits,
// maybe a colon, then blanks), as od, hexdump and xxd print. It returns
// more when buf ends inside the gap.
func skipGap(buf []byte, j int) (int, status) {
	n := len(buf)
	skipped := 0
	newline := false
	for j < n && isGap(buf[j]) {
		if buf[j] == '\n' {
			newline = true
		}
		j++
		if skipped++; skipped > maxGap {
			return j, fail
		}
	}
	if j == n {
		return j, more
	}
	if !newline {
		return j, match
	}
	// An offset column?
	k := j
	for k < n && k-j < 9 {
		if _, ok := hexVal(buf[k]); !ok {
			break
		}
		k++
	}
	if k == n {
		return j, more
	}
	d := k - j
	if d < 6 || d > 8 {
		return j, match
	}
	if buf[k] == ':' {
		k++
	}
	if k == n {
		return j, more
	}
	if buf[k] != ' ' && buf[k] != '\t' {
		return j, match
	}
	for k < n && (buf[k] == ' ' || buf[k] == '\t') {
		k++
	}
	if k == n {
		return j, more
	}
	return k, match
}

func (p *pat) matchUnits(buf []byte, i int, final bool) (s, e int, st status) {
	n := len(buf)
	j := i
	u := p.unit
	for k := 0; k < len(p.text); k += u {
		if k > 0 {
			if j, st = skipGap(buf, j); st != match {
				if st == more && final {
					return i, j, partial(k, len(p.text))
				}
				return i, j, st
			}
		}
		if j+u > n {
			if final {
				return i, j, partial(k, len(p.text))
			}
			// Verify what is there before asking for more.
			for t := 0; j+t < n; t++ {
				c := buf[j+t]
				if p.fold {
					c = lower(c)
				}
				if c != p.text[k+t] {
					return i, j, fail
				}
			}
			return i, j, more
		}
		for t := 0; t < u; t++ {
			c := buf[j+t]
			if p.fold {
				c = lower(c)
			}
			if c != p.text[k+t] {
				return i, j, fail
			}
		}
		j += u
	}
	s, e = i, j
	if p.extend == nil {
		return s, e, match
	}
	// The units around the match mix the value's bits with its
	// neighbours': they go too.
	if u == 1 {
		// A base64 character on each side.
		if s > 0 && p.extend[buf[s-1]] {
			s--
		}
		if e < n && p.extend[buf[e]] {
			e++
		}
		if e == n && !final {
			return s, e, more
		}
	} else {
		// An od word on each side: a whole token, a blank or two away.
		b := s
		for b > 0 && (buf[b-1] == ' ' || buf[b-1] == '\t') && s-b < 2 {
			b--
		}
		if b < s && b >= u && p.allIn(buf[b-u:b]) && (b == u || isGap(buf[b-u-1])) {
			s = b - u
		}
		j = e
		for j < n && (buf[j] == ' ' || buf[j] == '\t') && j-e < 2 {
			j++
		}
		switch {
		case j == n || j+u >= n && p.allIn(buf[j:]):
			if !final {
				return s, e, more
			}
			if j > e && j+u == n {
				e = n
			}
		case j > e && j+u < n && p.allIn(buf[j:j+u]) && isGap(buf[j+u]):
			e = j + u
		}
	}
	if p.pad {
		for e < n && buf[e] == '=' {
			e++
		}
		if e == n && !final {
			return s, e, more
		}
	}
	return s, e, match
}

func (p *pat) allIn(b []byte) bool {
	for _, c := range b {
		if !p.extend[c] {
			return false
		}
	}
	return true
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func (p *pat) matchRegex(buf []byte, i int, prev byte, final bool) (s, e int, st status) {
	if p.boundary {
		b := prev
		if i > 0 {
			b = buf[i-1]
		}
		if isWord(b) {
			return i, i, fail
		}
	}
	n := len(buf)
	lim := min(n, i+p.maxLen)
	truncated := !final && i+p.maxLen > n
	loc := p.re().FindSubmatchIndex(buf[i:lim])
	if loc == nil {
		if truncated {
			return i, i, more
		}
		return i, i, fail
	}
	if truncated && i+loc[1] == lim {
		return i, i, more
	}
	s, e = i+loc[0], i+loc[1]
	if len(loc) >= 4 && loc[2] >= 0 {
		s, e = i+loc[2], i+loc[3]
	}
	if e <= s || p.valid != nil && !p.valid(buf[s:e]) {
		return i, i, fail
	}
	return s, e, match
}
