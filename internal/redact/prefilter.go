package redact

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// factors are literal strings at least one of which appears in every
// match of a pattern: a string that holds none of them cannot match, and
// the pattern need not run on it. Most strings an MCP call carries hold no
// secret, and a Contains per literal costs far less than a regular
// expression's scan.
type factors struct {
	// lits are the literals; lower-cased when fold.
	lits []string
	// fold: the literals match case-insensitively ((?i)).
	fold bool
	// known is false when no literal is required: the pattern always runs.
	known bool
}

// patternFactors derives the factors of pattern, a valid RE2 expression.
func patternFactors(pattern string) factors {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return factors{}
	}
	return factorsOf(re.Simplify())
}

func factorsOf(re *syntax.Regexp) factors {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		lit := string(re.Rune)
		if fold {
			lit = strings.ToLower(lit)
		}
		return factors{lits: []string{lit}, fold: fold, known: true}
	case syntax.OpCapture:
		return factorsOf(re.Sub[0])
	case syntax.OpPlus:
		return factorsOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return factorsOf(re.Sub[0])
		}
	case syntax.OpConcat:
		// Every part of a concatenation appears in a match, and so does
		// every run of consecutive parts that spell a few strings (literals,
		// small classes): the one whose shortest literal is the longest
		// filters best.
		var best factors
		consider := func(f factors) {
			// An empty literal, which a run of optional parts may spell,
			// is in every string: it filters nothing.
			if f.known && f.shortest() > 0 && (!best.known || f.shortest() > best.shortest()) {
				best = f
			}
		}
		var run factors
		for _, sub := range re.Sub {
			consider(factorsOf(sub))
			if e, ok := spell(sub); ok {
				if run.known {
					run, ok = product(run, e)
				} else {
					run = e
				}
				if ok {
					consider(run)
					continue
				}
			}
			run = factors{}
		}
		return best
	case syntax.OpAlternate:
		// One of the alternatives appears: each must name its literals.
		var all factors
		for _, sub := range re.Sub {
			f := factorsOf(sub)
			if !f.known {
				return factors{}
			}
			all.lits = append(all.lits, f.lits...)
			all.fold = all.fold || f.fold
		}
		if all.fold {
			for i, l := range all.lits {
				all.lits[i] = strings.ToLower(l)
			}
		}
		all.known = true
		return all
	}
	return factors{}
}

// maxSpelled bounds the strings a run of a concatenation is spelled as.
const maxSpelled = 64

// spell returns the strings re matches, when it matches a few whole
// strings only: a literal, a small class, an alternation or a
// concatenation of those.
func spell(re *syntax.Regexp) (factors, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return factorsOf(re), true
	case syntax.OpCapture:
		return spell(re.Sub[0])
	case syntax.OpQuest:
		f, ok := spell(re.Sub[0])
		if !ok || len(f.lits) == maxSpelled {
			return factors{}, false
		}
		f.lits = append(f.lits, "")
		return f, true
	case syntax.OpCharClass:
		var lits []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if len(lits) == maxSpelled {
					return factors{}, false
				}
				lits = append(lits, string(c))
			}
		}
		return factors{lits: lits, known: len(lits) > 0}, len(lits) > 0
	case syntax.OpAlternate:
		var all factors
		for _, sub := range re.Sub {
			f, ok := spell(sub)
			if !ok || len(all.lits)+len(f.lits) > maxSpelled {
				return factors{}, false
			}
			all.lits = append(all.lits, f.lits...)
			all.fold = all.fold || f.fold
		}
		all.known = true
		return dedupe(lowerIfFold(all)), true
	case syntax.OpConcat:
		var run factors
		for i, sub := range re.Sub {
			f, ok := spell(sub)
			if !ok {
				return factors{}, false
			}
			if i == 0 {
				run = f
				continue
			}
			if run, ok = product(run, f); !ok {
				return factors{}, false
			}
		}
		return run, run.known
	}
	return factors{}, false
}

// product spells a followed by b, if that is not too many strings.
func product(a, b factors) (factors, bool) {
	if len(a.lits)*len(b.lits) > maxSpelled {
		return factors{}, false
	}
	out := factors{fold: a.fold || b.fold, known: true}
	for _, x := range a.lits {
		for _, y := range b.lits {
			out.lits = append(out.lits, x+y)
		}
	}
	return dedupe(lowerIfFold(out)), true
}

func lowerIfFold(f factors) factors {
	if f.fold {
		for i, l := range f.lits {
			f.lits[i] = strings.ToLower(l)
		}
	}
	return f
}

func dedupe(f factors) factors {
	slices.Sort(f.lits)
	f.lits = slices.Compact(f.lits)
	return f
}

// shortest is the length of the shortest literal.
func (f factors) shortest() int {
	n := -1
	for _, l := range f.lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// absent reports whether s certainly holds none of the literals, so that
// the pattern cannot match it. lower is s lower-cased, computed on first
// use. Case-insensitive literals are only ruled out on ASCII strings, where
// lower-casing folds exactly as (?i) does.
func (f factors) absent(s string, lower *string, ascii bool) bool {
	if !f.known {
		return false
	}
	if f.fold {
		if !ascii {
			return false
		}
		if *lower == "" {
			*lower = strings.ToLower(s)
		}
		s = *lower
	}
	for _, l := range f.lits {
		if strings.Contains(s, l) {
			return false
		}
	}
	return true
}

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scanner finds, in one pass over a string, which groups of literals it
// holds any literal of: an Aho–Corasick automaton over bytes, ASCII
// letters folded to lower case. Literals are matched
// case-insensitively: for a case-sensitive one that is a superset of its
// matches, which is all a pre-filter needs.
type scanner struct {
	class [256]uint8 // byte → its class; 0 for a byte no literal has
	n     int        // classes, the 0 one included
	// next maps a state's offset (its number times n) plus a class to the
	// next state's offset, negated when that state completes a literal:
	// one load per byte, and one sign test says whether to look at out.
	next   []int32
	out    [][]uint64 // state number → the groups it completes, as a bit set
	words  int        // words of a group bit set
	groups int
}

// fold lower-cases an ASCII letter.
func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// newScanner builds the scanner of groups of literals.
func newScanner(groups [][]string) *scanner {
	sc := &scanner{groups: len(groups), words: (len(groups) + 63) / 64}
	// Classes: the folded bytes the literals use.
	sc.n = 1
	for _, g := range groups {
		for _, l := range g {
			for i := 0; i < len(l); i++ {
				if b := fold(l[i]); sc.class[b] == 0 {
					sc.class[b] = uint8(sc.n)
					sc.n++
				}
			}
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		sc.class[b] = sc.class[b+'a'-'A']
	}
	// The trie, then the failure links, breadth first.
	type node struct {
		edges map[uint8]int32
		out   []uint64
	}
	nodes := []node{{edges: map[uint8]int32{}, out: make([]uint64, sc.words)}}
	for gi, g := range groups {
		for _, l := range g {
			cur := int32(0)
			for i := 0; i < len(l); i++ {
				c := sc.class[fold(l[i])]
				nx, ok := nodes[cur].edges[c]
				if !ok {
					nx = int32(len(nodes))
					nodes = append(nodes, node{edges: map[uint8]int32{}, out: make([]uint64, sc.words)})
					nodes[cur].edges[c] = nx
				}
				cur = nx
			}
			nodes[cur].out[gi/64] |= 1 << (gi % 64)
		}
	}
	// The automaton over state numbers, then each entry as the offset of
	// its target, negated for a target with groups.
	next := make([]int32, len(nodes)*sc.n)
	sc.out = make([][]uint64, len(nodes))
	fail := make([]int32, len(nodes))
	queue := []int32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s != 0 {
			for w := range sc.words {
				nodes[s].out[w] |= nodes[fail[s]].out[w]
			}
		}
		for _, bits := range nodes[s].out {
			if bits != 0 {
				sc.out[s] = nodes[s].out
				break
			}
		}
		for c := range sc.n {
			if nx, ok := nodes[s].edges[uint8(c)]; ok {
				if s != 0 {
					fail[nx] = next[int(fail[s])*sc.n+c]
				}
				next[int(s)*sc.n+c] = nx
				queue = append(queue, nx)
			} else if s != 0 {
				next[int(s)*sc.n+c] = next[int(fail[s])*sc.n+c]
			}
		}
	}
	sc.next = make([]int32, len(next))
	for i, to := range next {
		sc.next[i] = to * int32(sc.n)
		if sc.out[to] != nil {
			sc.next[i] = -sc.next[i]
		}
	}
	return sc
}

// scan sets in found (of words bits) the groups s holds a literal of, and
// reports whether it found any and whether s is ASCII. It stops at the
// first byte that is not ASCII, found then incomplete: the caller must not
// rely on it.
func (sc *scanner) scan(s string, found []uint64) (any, ascii bool) {
	clear(found)
	off, next, class := int32(0), sc.next, &sc.class
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= utf8.RuneSelf {
			return true, false
		}
		off = next[off+int32(class[b])]
		if off < 0 {
			off = -off
			for w, bits := range sc.out[int(off)/sc.n] {
				found[w] |= bits
			}
			any = true
		}
	}
	return any, true
}

// each calls fn at every index of s where a literal ends, with the groups
// of the literals that end there.
func (sc *scanner) each(s string, fn func(end int, found []uint64)) {
	off := int32(0)
	for i := 0; i < len(s); i++ {
		off = sc.next[off+int32(sc.class[s[i]])]
		if off < 0 {
			off = -off
			fn(i, sc.out[int(off)/sc.n])
		}
	}
}
