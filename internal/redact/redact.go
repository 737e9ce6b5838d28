// Package redact removes secrets from call arguments and attributes at
// ingest, before anything is stored or logged. Rules name JSON keys
// (password, token, api_key …), JSON paths ($.auth.secret,
// $.headers[*].value, $..cookie) and value patterns (bearer tokens, AWS
// access keys, private key blocks …). A secret is replaced by a marker
// holding a keyed hash of it — "[REDACTED:hmac:1a2b3c4d5e6f]", the first 48
// bits of HMAC-SHA256(key, secret) in hex — so that equal secrets stay
// correlatable across events without being readable, and without a
// dictionary attack on the hash unless the key leaks.
package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// MarkerPrefix starts every marker.
const MarkerPrefix = "[REDACTED:hmac:"

// hashHex is how many hex digits of the HMAC a marker keeps.
const hashHex = 12

// markerRE matches a marker exactly.
var markerRE = regexp.MustCompile(`^\[REDACTED:hmac:[0-9a-f]{12}\]$`)

// IsMarker reports whether s is a marker, which is never redacted again.
func IsMarker(s string) bool { return len(s) == len(MarkerPrefix)+hashHex+1 && markerRE.MatchString(s) }

// Rules say what is a secret.
type Rules struct {
	// Keys are JSON object keys and attribute names whose values are
	// secrets, whatever they hold. A key matches when its last words spell
	// the rule's key, as whole words, case and separators aside: "api_key"
	// matches "x-api-key", "apiKey" and "API_KEY_B64"; "token" matches
	// "accessToken" but not "max_tokens" or "token_count" (see keyMatcher).
	Keys []string `json:"keys" yaml:"keys"`
	// Paths are JSON paths to values that are secrets: $ is the argument
	// document, .name a key, [*] or .* any element or key, [n] an array
	// index, ..name a key at any depth.
	Paths []string `json:"paths" yaml:"paths"`
	// Patterns are regular expressions (RE2) for secrets inside any string
	// value; with a group named secret, only that group is replaced.
	Patterns []string `json:"patterns" yaml:"patterns"`
	// Defaults, unless false, adds DefaultRules to these.
	Defaults *bool `json:"defaults,omitempty" yaml:"defaults,omitempty"`
}

// DefaultRules are the rules applied when none are configured.
func DefaultRules() Rules {
	return Rules{
		Keys: []string{
			"password", "passwords", "passwd", "passphrase", "secret", "secrets", "secret_key",
			"token", "authorization", "api_key", "api_keys", "access_key", "access_keys",
			"private_key", "private_keys", "credential", "credentials", "cookie", "cookies",
			"session_key", "signature",
		},
		Patterns: []string{
			// Authorization header values.
			`(?i)\b(?:bearer|basic)\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)`,
			// AWS access key ids and secret keys after their names.
			`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`,
			`(?i)aws.{0,20}?(?:secret|key).{0,5}?[=:"'\s]{1,4}(?P<secret>[A-Za-z0-9/+]{40})\b`,
			// PEM private key blocks, whole.
			`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----`,
			// GitHub, Slack, Stripe, OpenAI/Anthropic-style and mcpdrift tokens; JWTs.
			`\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}\b`,
			`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`,
			`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b`,
			`\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b`,
			`\bmcpdrift_[A-Za-z0-9_-]{40,}`,
			`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`,
			// key=value secrets in free text and query strings.
			`(?i)\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)\s*[=:]\s*(?P<secret>[^\s&,;"'\]\[]{3,})`,
			// Credentials in URLs.
			`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<secret>[^/\s@]+)@`,
		},
	}
}

// LoadRules reads rules from a YAML or JSON file (JSON is read as YAML).
// Unknown fields are refused.
func LoadRules(path string) (Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Rules{}, fmt.Errorf("cannot read the redaction rules: %w", err)
	}
	var r Rules
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return Rules{}, fmt.Errorf("cannot parse the redaction rules %s: %w", filepath.Base(path), err)
	}
	return r, nil
}

// Config configures a Redactor.
type Config struct {
	// Rules say what is a secret; DefaultRules when zero.
	Rules Rules
	// Key keys the markers' HMAC. Without one, a random key is drawn:
	// markers then correlate only within one process.
	Key []byte
}

// Redactor applies rules. It is safe for concurrent use.
type Redactor struct {
	key      []byte
	keys     []string // the rules' keys, as written
	paths    [][]step
	patterns []*regexp.Regexp
	secretIx []int      // index of the secret group of each pattern, 0 for all
	filters  []factors  // the literals each pattern's matches hold
	locators []*locator // where in a string each pattern's matches can lie
	// regionMin is the length from which a pattern runs on the regions
	// its locator finds rather than on the whole string; -1: never.
	regionMin int
	// patScan finds which patterns' literals a string holds.
	patScan *scanner
	// allKnown: every pattern has literals, so a string that holds none
	// is matched by none.
	allKnown bool
	// keyMatch decides which keys name secrets.
	keyMatch *keyMatcher
	// Redacted counts the values replaced.
	redacted atomic.Uint64
	// ephemeral reports a random key.
	ephemeral bool
}

// New compiles cfg.
func New(cfg Config) (*Redactor, error) {
	rules := cfg.Rules
	if rules.Keys == nil && rules.Paths == nil && rules.Patterns == nil && rules.Defaults == nil {
		rules = DefaultRules()
	} else if rules.Defaults == nil || *rules.Defaults {
		d := DefaultRules()
		rules.Keys = append(d.Keys, rules.Keys...)
		rules.Patterns = append(d.Patterns, rules.Patterns...)
	}
	r := &Redactor{key: cfg.Key, regionMin: regionMin}
	if len(r.key) == 0 {
		r.key = make([]byte, 32)
		if _, err := rand.Read(r.key); err != nil {
			return nil, fmt.Errorf("cannot draw a redaction key: %w", err)
		}
		r.ephemeral = true
	}
	var err error
	if r.keyMatch, err = newKeyMatcher(rules.Keys); err != nil {
		return nil, err
	}
	r.keys = rules.Keys
	for _, p := range rules.Paths {
		steps, err := parsePath(p)
		if err != nil {
			return nil, fmt.Errorf("paths: %w", err)
		}
		r.paths = append(r.paths, steps)
	}
	for _, p := range rules.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("patterns: cannot compile %q: %w", p, err)
		}
		r.patterns = append(r.patterns, re)
		r.secretIx = append(r.secretIx, max(re.SubexpIndex("secret"), 0))
		f := patternFactors(p)
		r.filters = append(r.filters, f)
		r.locators = append(r.locators, newLocator(p, f))
	}
	groups := make([][]string, len(r.filters))
	for i, f := range r.filters {
		groups[i] = f.lits
	}
	r.patScan = newScanner(groups)
	r.allKnown = true
	for _, f := range r.filters {
		r.allKnown = r.allKnown && f.known
	}
	return r, nil
}

// Ephemeral reports whether the key was drawn at random.
func (r *Redactor) Ephemeral() bool { return r.ephemeral }

// Redacted returns how many values were replaced since New.
func (r *Redactor) Redacted() uint64 { return r.redacted.Load() }

// Marker returns the marker of secret.
func (r *Redactor) Marker(secret string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(secret))
	return MarkerPrefix + hex.EncodeToString(m.Sum(nil))[:hashHex] + "]"
}

// Events redacts the events in place: their raw and normalised arguments;
// their external target, identifiers that a client chooses (request,
// session, run and service instance ids, idempotency keys, the request id
// a retry names) and error code, by pattern; and their extra attributes.
// An event's ID is computed before: redaction does not change it.
func (r *Redactor) Events(events []otelschema.Event) {
	for i := range events {
		e := &events[i]
		raw := e.ArgsRaw
		if raw != "" {
			e.ArgsRaw = r.Args(raw)
		}
		// Normalised arguments are often the raw ones: when those had
		// nothing to redact, neither have these.
		if e.ArgsNormalized != "" && (e.ArgsNormalized != raw || e.ArgsRaw != raw) {
			e.ArgsNormalized = r.Args(e.ArgsNormalized)
		}
		for _, p := range []*string{&e.ExternalTarget, &e.RequestID, &e.SessionID, &e.RunID, &e.ServiceInstance,
			&e.IdempotencyKey, &e.RetryOf, &e.ErrorCode} {
			if *p != "" {
				*p = r.Text(*p)
			}
		}
		for k, v := range e.Attributes {
			if r.secretKey(k) && !IsMarker(v) {
				r.redacted.Add(1)
				e.Attributes[k] = r.Marker(v)
				continue
			}
			if nv := r.Text(v); nv != v {
				e.Attributes[k] = nv
			}
		}
	}
}

// Args redacts an argument document: JSON is parsed and redacted by key,
// path and pattern; anything else is scanned with the patterns. A document
// with nothing to redact is returned unchanged; one with secrets is
// re-encoded compactly, keys sorted.
func (r *Redactor) Args(s string) string {
	if r.clean(s) {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() || !json.Valid([]byte(s)) {
		return r.Text(s)
	}
	if _, ok := v.(string); !ok {
		if _, isObj := v.(map[string]any); !isObj {
			if _, isArr := v.([]any); !isArr {
				return s // a number, bool or null holds no secret
			}
		}
	}
	changed := false
	for _, p := range r.paths {
		v = r.applyPath(v, p, &changed)
	}
	v = r.walk(v, &changed)
	if !changed {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Cannot happen for decoded JSON; never let the original through.
		return r.Marker(s)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// walk redacts v: values under secret keys whole, strings by pattern, and
// object keys by pattern too (an object keyed by URL can hold a password
// in a key).
func (r *Redactor) walk(v any, changed *bool) any {
	switch x := v.(type) {
	case map[string]any:
		var renamed [][2]string
		for k := range x {
			if nk := r.Text(k); nk != k {
				renamed = append(renamed, [2]string{k, nk})
			}
		}
		for _, kk := range renamed {
			// Distinct secrets have distinct markers, so a renamed key
			// meets another only if the document held the key's
			// redacted form already; the renamed one then wins.
			e := x[kk[0]]
			delete(x, kk[0])
			x[kk[1]] = e
			*changed = true
		}
		for k, e := range x {
			if r.secretKey(k) {
				if s, ok := e.(string); ok && IsMarker(s) {
					continue
				}
				if e == nil {
					continue
				}
				x[k] = r.markValue(e)
				*changed = true
				continue
			}
			x[k] = r.walk(e, changed)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = r.walk(e, changed)
		}
		return x
	case string:
		if ns := r.Text(x); ns != x {
			*changed = true
			return ns
		}
	}
	return v
}

// markValue returns the marker of a JSON value: of the string itself, or
// of the compact JSON of anything else.
func (r *Redactor) markValue(v any) string {
	r.redacted.Add(1)
	if s, ok := v.(string); ok {
		return r.Marker(s)
	}
	b, _ := json.Marshal(v)
	return r.Marker(string(b))
}

// clean reports whether an argument document certainly holds nothing to
// redact, without decoding it: no path rule is configured (paths pick
// values by place, whatever they hold), it has no backslash (a JSON escape
// could spell a key or a literal that the raw text does not), no string
// followed by a colon (an object key, if the document is JSON) is a secret
// key, and no pattern's literals appear anywhere. Every key and string of
// the document is then a piece of its text, so none can match either;
// and a document that is not JSON is redacted by pattern only.
func (r *Redactor) clean(s string) bool {
	if len(r.paths) > 0 || strings.IndexByte(s, '\\') >= 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		n := strings.IndexByte(s[i+1:], '"')
		if n < 0 {
			break
		}
		str, k := s[i+1:i+1+n], i+2+n
		for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
			k++
		}
		if k < len(s) && s[k] == ':' && r.secretKey(str) {
			return false
		}
		i += n + 1
	}
	var c candidates
	if !r.candidates(s, &c) {
		return true
	}
	for i := range r.patterns {
		if c.may(r, i, s) {
			return false
		}
	}
	return true
}

// candidates says which patterns may match a string: on an ASCII string,
// those whose literals one scan found (and those without literals); on any
// other, those whose literals are not certainly absent.
type candidates struct {
	ascii bool
	buf   [4]uint64 // the patterns found, up to 256 of them
	more  []uint64  // the patterns found, past 256 patterns
	lower string    // the string lower-cased, for absent
}

// candidates fills c for s and reports whether any pattern may match it.
func (r *Redactor) candidates(s string, c *candidates) bool {
	c.lower = ""
	var found []uint64
	if w := r.patScan.words; w > len(c.buf) {
		c.more = make([]uint64, w)
		found = c.more
	} else {
		found = c.buf[:w]
	}
	var any bool
	any, c.ascii = r.patScan.scan(s, found)
	return any || !r.allKnown
}

// may reports whether pattern i may match s, the string of c.
func (c *candidates) may(r *Redactor, i int, s string) bool {
	switch {
	case !c.ascii:
		return !r.filters[i].absent(s, &c.lower, false)
	case !r.filters[i].known:
		return true
	case c.more != nil:
		return c.more[i/64]&(1<<(i%64)) != 0
	}
	return c.buf[i/64]&(1<<(i%64)) != 0
}

// Text replaces every pattern match in s by its marker. A pattern runs only
// when s holds one of the literals its matches require (factors).
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	var c candidates
	if !r.candidates(s, &c) {
		return s
	}
	for i := range r.patterns {
		if !c.may(r, i, s) {
			continue
		}
		if ns := r.replace(s, i, c.ascii); ns != s {
			// Look again at what the marker left.
			s = ns
			r.candidates(s, &c)
		}
	}
	return s
}

// replace replaces the matches of pattern i in s, the secret group of each
// if it has one, by their markers.
func (r *Redactor) replace(s string, i int, ascii bool) string {
	group := r.secretIx[i]
	matches := r.matches(s, i, ascii)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[2*group], m[2*group+1]
		if start < 0 || start < last {
			continue
		}
		secret := s[start:end]
		if strings.Contains(secret, MarkerPrefix) || strings.HasPrefix(s[start:], MarkerPrefix) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(r.Marker(secret))
		r.redacted.Add(1)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matches returns the submatch indexes of every match of pattern i in s,
// as FindAllStringSubmatchIndex does; a long ASCII string is scanned where
// its locator says matches can lie.
func (r *Redactor) matches(s string, i int, ascii bool) [][]int {
	re, l := r.patterns[i], r.locators[i]
	if l != nil && ascii && r.regionMin >= 0 && len(s) >= r.regionMin {
		if m, ok := l.matches(re, s); ok {
			return m
		}
	}
	return re.FindAllStringSubmatchIndex(s, -1)
}

// secretKey reports whether a key names a secret (keyMatcher).
func (r *Redactor) secretKey(k string) bool { return r.keyMatch.match(k) }

// step is one step of a JSON path.
type step struct {
	key   string // a key; "" with any or index
	index int    // an array index, -1 for none
	any   bool   // [*] or .*
	deep  bool   // ..key
}

// parsePath reads $.a.b[0][*]..c.
func parsePath(p string) ([]step, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(p), "$")
	if !ok {
		return nil, fmt.Errorf("path %q: must start with $", p)
	}
	var steps []step
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".."):
			name, r := cutName(rest[2:])
			if name == "" {
				return nil, fmt.Errorf("path %q: .. needs a key", p)
			}
			steps, rest = append(steps, step{key: name, index: -1, deep: true}), r
		case strings.HasPrefix(rest, ".*"):
			steps, rest = append(steps, step{any: true, index: -1}), rest[2:]
		case strings.HasPrefix(rest, "."):
			name, r := cutName(rest[1:])
			if name == "" {
				return nil, fmt.Errorf("path %q: empty key", p)
			}
			steps, rest = append(steps, step{key: name, index: -1}), r
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			in := rest[1:end]
			rest = rest[end+1:]
			switch {
			case in == "*":
				steps = append(steps, step{any: true, index: -1})
			case len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
				steps = append(steps, step{key: in[1 : len(in)-1], index: -1})
			default:
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("path %q: [%s] is neither *, a quoted key nor an index", p, in)
				}
				steps = append(steps, step{index: n})
			}
		default:
			return nil, fmt.Errorf("path %q: unexpected %q", p, rest)
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("path %q: names no value", p)
	}
	return steps, nil
}

func cutName(s string) (string, string) {
	i := strings.IndexAny(s, ".[")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// applyPath redacts the values path reaches in v.
func (r *Redactor) applyPath(v any, path []step, changed *bool) any {
	if len(path) == 0 {
		if v == nil {
			return v
		}
		if s, ok := v.(string); ok && IsMarker(s) {
			return v
		}
		*changed = true
		return r.markValue(v)
	}
	st, rest := path[0], path[1:]
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if st.any || (!st.deep && st.index < 0 && k == st.key) || (st.deep && k == st.key) {
				x[k] = r.applyPath(e, rest, changed)
			}
			if st.deep {
				if s, ok := x[k].(string); !ok || !IsMarker(s) {
					x[k] = r.applyPath(x[k], path, changed)
				}
			}
		}
		return x
	case []any:
		for i, e := range x {
			if st.any || (st.index == i && st.key == "" && !st.deep) {
				x[i] = r.applyPath(e, rest, changed)
			}
			if st.deep {
				x[i] = r.applyPath(x[i], path, changed)
			}
		}
		return x
	}
	return v
}

// ErrNoKey is returned by LoadKey for an empty key file.
var ErrNoKey = errors.New("the redaction key file is empty")

// LoadKey reads a redaction key from a file: its bytes, surrounding white
// space removed.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the redaction key: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoKey)
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("the redaction key in %s is %d bytes: use at least 16 (32 random bytes, e.g. openssl rand -hex 32)", path, len(b))
	}
	return b, nil
}

// Flags are the redaction flags of a command that ingests.
type Flags struct {
	// RulesFile is a YAML or JSON rules file; empty applies DefaultRules.
	RulesFile string
	// KeyFile holds the HMAC key of the markers; empty draws a random key
	// per process.
	KeyFile string
}

// Register registers -redact.rules-file and -redact.key-file.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.RulesFile, "redact.rules-file", f.RulesFile, "redaction rules (YAML or JSON: keys, paths, patterns, defaults); default: the built-in rules")
	fs.StringVar(&f.KeyFile, "redact.key-file", f.KeyFile, "file holding the HMAC key of redaction markers (at least 16 bytes); without it a random key per process: equal secrets correlate only within one run")
}

// Build returns the redactor the flags describe.
func (f *Flags) Build() (*Redactor, error) {
	var cfg Config
	if f.RulesFile != "" {
		r, err := LoadRules(f.RulesFile)
		if err != nil {
			return nil, fmt.Errorf("redact.rules-file: %w", err)
		}
		cfg.Rules = r
	}
	if f.KeyFile != "" {
		k, err := LoadKey(f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("redact.key-file: %w", err)
		}
		cfg.Key = k
	}
	r, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("redact.rules-file: %w", err)
	}
	return r, nil
}
