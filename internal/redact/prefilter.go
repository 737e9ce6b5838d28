package redact

import (
	"regexp/syntax"
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
		// Every part of a concatenation appears in a match: the part whose
		// shortest literal is the longest filters best.
		var best factors
		for _, sub := range re.Sub {
			f := factorsOf(sub)
			if f.known && (!best.known || f.shortest() > best.shortest()) {
				best = f
			}
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
