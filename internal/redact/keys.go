package redact

import "fmt"

// A key names a secret when its last words spell one of the rules' keys.
// The words of a key are its runs of letters and digits, split where the
// case changes: "x-api-key", "X_API_KEY", "xApiKey" and "XAPIKey" are all
// the words x, api, key. A rule is spelled by consecutive whole words,
// whatever separates them ("api_key" and "apikey" both match the words
// api key, and the word apikey), and must end the key but for qualifiers:
// words that say how the secret is written or which of several it is
// (value, raw, b64, pem, hash, confirmation, old, new …), numbers, and
// digits that end the last word. So "token" matches "api_token",
// "accessToken", "token_value" and "token2", but neither "max_tokens" (the
// word is tokens) nor "token_count" (a count of tokens) nor "tokenizer";
// "secret" matches "client-secret" but not "secretary" or "secret_name".
//
// keyMatcher decides it in one backward pass over the key's last bytes:
// the qualifiers are left out from the end, then a trie of the rules'
// keys, reversed, is walked back from the end of the last word, and the key
// matches when a rule ends at the start of a word.
type keyMatcher struct {
	rules      revTrie // the rules' keys, as ruleSpelling spells them
	qualifiers revTrie // the qualifiers
}

// qualifiers are the words a secret key may end with after the words that
// name the secret: its encoding or form, or which one of several it is.
var qualifiers = []string{
	"value", "val", "raw", "plain", "plaintext", "text", "str", "string",
	"b64", "base64", "hex", "pem", "der", "enc", "encoded", "encrypted",
	"hash", "hashed", "digest", "data", "bytes", "json", "header",
	"confirm", "confirmation", "again", "repeat", "new", "old", "current",
	"prev", "previous", "orig", "original",
}

// isSep reports whether b separates words: an ASCII byte other than a
// letter or a digit. Other bytes belong to words.
func isSep(b byte) bool {
	return b < 0x80 && !isDigit(b) && !isLower(b) && !isUpper(b)
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
func isLower(b byte) bool { return 'a' <= b && b <= 'z' }
func isUpper(b byte) bool { return 'A' <= b && b <= 'Z' }

// wordStart reports whether a word of k starts at i, a byte that is not a
// separator: at the start, after a separator, at an upper-case letter after
// a lower-case letter or a digit ("apiKey"), or at the last upper-case
// letter of a run followed by a lower-case one ("APIKey").
func wordStart(k string, i int) bool {
	if i == 0 {
		return true
	}
	p, c := k[i-1], k[i]
	switch {
	case isSep(p):
		return true
	case isUpper(c) && (isLower(p) || isDigit(p)):
		return true
	case isUpper(c) && isUpper(p) && i+1 < len(k) && isLower(k[i+1]):
		return true
	}
	return false
}

// ruleSpelling returns the key rule k as the matcher compares it: its
// letters and digits, ASCII letters lower-cased.
func ruleSpelling(k string) string {
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isSep(c) {
			b = append(b, fold(c))
		}
	}
	return string(b)
}

// newKeyMatcher builds the matcher of the rules' keys.
func newKeyMatcher(keys []string) (*keyMatcher, error) {
	spelled := make([]string, 0, len(keys))
	for _, k := range keys {
		s := ruleSpelling(k)
		if s == "" {
			return nil, fmt.Errorf("keys: %q has no letter or digit", k)
		}
		spelled = append(spelled, s)
	}
	return &keyMatcher{rules: newRevTrie(spelled), qualifiers: newRevTrie(qualifiers)}, nil
}

// match reports whether k names a secret.
func (m *keyMatcher) match(k string) bool {
	// The end of the words that name the secret: qualifiers left out, and
	// the digits that end the last word.
	end := len(k)
	for {
		for end > 0 && isSep(k[end-1]) {
			end--
		}
		if end == 0 {
			return false
		}
		start, ok := m.qualifierEnding(k, end)
		if !ok {
			break
		}
		end = start
	}
	for isDigit(k[end-1]) {
		end--
	}
	state := int32(0)
	for i := end - 1; i >= 0; i-- {
		c := k[i]
		if isSep(c) {
			continue
		}
		if state = m.rules.step(state, c); state == 0 {
			return false
		}
		if m.rules.terminal[state] && wordStart(k, i) {
			return true
		}
	}
	return false
}

// qualifierEnding returns the start of the word of k that ends at end,
// when that word is a number or a qualifier.
func (m *keyMatcher) qualifierEnding(k string, end int) (int, bool) {
	i := end - 1
	for i >= 0 && isDigit(k[i]) {
		i--
	}
	if i < end-1 && wordStart(k, i+1) {
		return i + 1, true // a number
	}
	state := int32(0)
	for i := end - 1; i >= 0 && !isSep(k[i]); i-- {
		if state = m.qualifiers.step(state, k[i]); state == 0 {
			return 0, false
		}
		if wordStart(k, i) {
			return i, m.qualifiers.terminal[state]
		}
	}
	return 0, false
}

// revTrie is a trie of strings walked from their last byte to their first.
type revTrie struct {
	class    [256]uint8 // byte → its symbol, 0 for none; ASCII letters folded
	n        int        // symbols, 0 included
	next     []int32    // state*n + symbol → state; 0: no edge (the root is never entered)
	terminal []bool     // state → a string ends here
}

func newRevTrie(words []string) revTrie {
	t := revTrie{n: 1}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if t.class[w[i]] == 0 {
				t.class[w[i]] = uint8(t.n)
				t.n++
			}
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		t.class[b] = t.class[b+'a'-'A']
	}
	t.next = make([]int32, t.n) // the root
	t.terminal = []bool{false}
	for _, w := range words {
		state := int32(0)
		for i := len(w) - 1; i >= 0; i-- {
			at := int(state)*t.n + int(t.class[w[i]])
			if t.next[at] == 0 {
				t.next[at] = int32(len(t.terminal))
				t.terminal = append(t.terminal, false)
				t.next = append(t.next, make([]int32, t.n)...)
			}
			state = t.next[at]
		}
		t.terminal[state] = true
	}
	return t
}

// step returns the state after byte c from state; 0 when there is none.
func (t *revTrie) step(state int32, c byte) int32 { return t.next[int(state)*t.n+int(t.class[c])] }
