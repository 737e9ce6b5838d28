package redact

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// regionMin is the length from which a string's pattern matches are looked
// for in regions: below it, one scan of the whole string costs less.
const regionMin = 256

// A locator says where in an ASCII string a pattern's matches can lie, so
// that the pattern runs on those regions only. Go's regular expressions
// cost tens of nanoseconds per byte when a pattern does not begin with a
// case-sensitive literal (\b, (?i) and alternations all defeat the
// literal-prefix search), and a literal the pre-filter finds (a "key", a
// "://") is common in long text that holds no secret; a region is a few
// bytes around each literal.
//
// Every match holds one of the literals and only bytes of the alphabet,
// so it lies within the run of alphabet bytes around a literal; when every
// match begins with a literal, it begins there; when matches are at most
// maxLen bytes long, it ends within maxLen bytes of it. Each region is
// scanned with one byte of context on either side, so that \b, ^ and $ read
// what they read in the whole string; no match can include a context byte
// (it is outside the alphabet, before the first literal a match can start
// at, or beyond maxLen), so the matches found are exactly those the whole
// string's scan finds, in the same order.
type locator struct {
	alpha  [128]bool // the bytes a match can hold, in ASCII text
	lits   []string  // one of them is in every match (at its start, if prefix)
	prefix bool
	maxLen int // the longest match in ASCII text, in bytes; -1 if unbounded
	scan   *scanner
	// anchored is the pattern after one byte of context, anchored at the
	// start; anchored0 the pattern anchored. Set when prefix.
	anchored, anchored0 *regexp.Regexp
}

// newLocator returns the locator of pattern, or nil when its matches hold
// no known literal.
func newLocator(pattern string, f factors) *locator {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	l := &locator{maxLen: maxLen(re)}
	// Literals that begin every match place a region best, unless they are
	// so short (a class of letters) that they are everywhere.
	if p := prefixOf(re); p.known && p.shortest() > 0 && (p.shortest() >= 3 || !f.known || p.shortest() >= f.shortest()) {
		l.lits, l.prefix = p.lits, true
	} else if f.known && f.shortest() > 0 {
		l.lits = f.lits
	} else {
		return nil
	}
	alphabet(re, &l.alpha)
	if l.prefix {
		if l.anchored, err = regexp.Compile(`\A(?s:.)(?:` + pattern + `)`); err != nil {
			return nil
		}
		if l.anchored0, err = regexp.Compile(`\A(?:` + pattern + `)`); err != nil {
			return nil
		}
	}
	groups := make([][]string, len(l.lits))
	for i, lit := range l.lits {
		groups[i] = []string{lit}
	}
	l.scan = newScanner(groups)
	return l
}

// spans appends to out, ordered by start, the span [start, end) of s, an
// ASCII string, where a match holding each literal found can lie.
func (l *locator) spans(s string, out [][2]int) [][2]int {
	first := len(out)
	runStart, runEnd := -1, -1 // the alphabet run last found
	l.scan.each(s, func(end int, found []uint64) {
		for k, lit := range l.lits {
			if found[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			q := end + 1 - len(lit)
			if !l.inAlphabet(s[q : end+1]) {
				continue // a case variant of a case-sensitive literal
			}
			if q < runStart || q >= runEnd {
				runStart, runEnd = q, end+1
				for runStart > 0 && l.in(s[runStart-1]) {
					runStart--
				}
				for runEnd < len(s) && l.in(s[runEnd]) {
					runEnd++
				}
			}
			a, b := runStart, runEnd
			switch {
			case l.prefix:
				a = q
			case l.maxLen >= 0:
				a = max(a, q+len(lit)-l.maxLen)
			}
			if l.maxLen >= 0 {
				b = min(b, q+l.maxLen)
			}
			out = append(out, [2]int{a, b})
		}
	})
	spans := out[first:]
	slices.SortFunc(spans, func(x, y [2]int) int { return x[0] - y[0] })
	return out
}

// merge merges, in place, ordered spans that overlap or meet.
func merge(spans [][2]int) [][2]int {
	merged := spans[:0]
	for _, r := range spans {
		if n := len(merged); n > 0 && r[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// matches returns the submatch indexes of every match of re, the
// locator's pattern, in s, an ASCII string, as FindAllStringSubmatchIndex
// does, or ok false when scanning the whole string costs less.
//
// When every match begins with a literal, the pattern is tried anchored at
// each literal, in order, past the last match's end: that is how a scan
// of the whole string proceeds, since no match begins elsewhere, and each
// try stops where the pattern fails, a few bytes on in most text.
// Otherwise it scans the merged spans.
func (l *locator) matches(re *regexp.Regexp, s string) (out [][]int, ok bool) {
	spans := l.spans(s, nil)
	if len(spans) == 0 {
		return nil, true
	}
	if !l.prefix {
		spans = merge(spans)
	}
	covered := 0
	for _, sp := range spans {
		covered += sp[1] - sp[0]
	}
	// The bounds keep the work below a whole scan's, up to a small factor:
	// an anchored try can run to its span's end.
	if l.prefix && (covered > 2*len(s) || len(spans) > 16+len(s)/16) || !l.prefix && covered > len(s)/2 {
		return nil, false
	}
	last := 0
	for _, sp := range spans {
		lo, hi := max(sp[0]-1, 0), min(sp[1]+1, len(s))
		if !l.prefix {
			for _, m := range re.FindAllStringSubmatchIndex(s[lo:hi], -1) {
				out = append(out, shift(m, lo))
			}
			continue
		}
		if sp[0] < last {
			continue
		}
		a := l.anchored
		if sp[0] == 0 {
			a = l.anchored0
		}
		m := a.FindStringSubmatchIndex(s[lo:hi])
		if m == nil {
			continue
		}
		m = shift(m, lo)
		m[0] = sp[0] // the context byte is not the match's
		out = append(out, m)
		last = m[1]
	}
	return out, true
}

func shift(m []int, by int) []int {
	for k := range m {
		if m[k] >= 0 {
			m[k] += by
		}
	}
	return m
}

func (l *locator) in(b byte) bool { return b < 128 && l.alpha[b] }

func (l *locator) inAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		if !l.in(s[i]) {
			return false
		}
	}
	return true
}

// prefixOf returns literals one of which every match of re begins with.
func prefixOf(re *syntax.Regexp) factors {
	switch re.Op {
	case syntax.OpLiteral:
		return factorsOf(re)
	case syntax.OpCapture, syntax.OpPlus:
		return prefixOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixOf(re.Sub[0])
		}
	case syntax.OpAlternate:
		var all factors
		for _, sub := range re.Sub {
			f := prefixOf(sub)
			if !f.known || f.shortest() == 0 {
				return factors{}
			}
			all.lits = append(all.lits, f.lits...)
			all.fold = all.fold || f.fold
		}
		all.known = true
		return dedupe(lowerIfFold(all))
	case syntax.OpConcat:
		// The longest run of spelled parts from the start, zero-width
		// assertions passed over.
		var run factors
		for _, sub := range re.Sub {
			if zeroWidth(sub.Op) {
				continue
			}
			e, ok := spell(sub)
			if !ok {
				if !run.known {
					return prefixOf(sub)
				}
				break
			}
			if !run.known {
				run = e
				continue
			}
			next, ok := product(run, e)
			if !ok {
				break
			}
			run = next
		}
		if run.known && run.shortest() > 0 {
			return run
		}
	}
	return factors{}
}

func zeroWidth(op syntax.Op) bool {
	switch op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEmptyMatch:
		return true
	}
	return false
}

// maxLen returns the length of the longest match of re in ASCII text, or
// -1 if it has none.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := maxLen(re.Sub[0])
		if re.Max < 0 || n < 0 {
			return -1
		}
		return re.Max * n
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n := maxLen(sub)
			if n < 0 {
				return -1
			}
			total += n
		}
		return total
	case syntax.OpAlternate:
		longest := 0
		for _, sub := range re.Sub {
			n := maxLen(sub)
			if n < 0 {
				return -1
			}
			longest = max(longest, n)
		}
		return longest
	}
	return 0 // zero-width assertions, the empty match, no match
}

// alphabet marks in alpha the ASCII bytes a match of re can hold.
func alphabet(re *syntax.Regexp, alpha *[128]bool) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if c < 128 {
				alpha[c] = true
				if re.Flags&syntax.FoldCase != 0 {
					alpha[strings.ToLower(string(c))[0]] = true
					alpha[strings.ToUpper(string(c))[0]] = true
				}
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1] && c < 128; c++ {
				alpha[c] = true
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for c := range alpha {
			alpha[c] = re.Op == syntax.OpAnyChar || c != '\n' || alpha[c]
		}
	}
	for _, sub := range re.Sub {
		alphabet(sub, alpha)
	}
}
