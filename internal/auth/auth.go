// Package auth authenticates mcpdrift's clients: bearer tokens, stored
// hashed in a token file, each bound to one tenant and a set of scopes
// (ingest, read, audit, drifttest); the TLS settings of the listeners, with optional
// client certificates; and the rule that a listener reachable from other
// machines runs with tokens unless an operator says otherwise.
//
// Tokens are 256 bits from crypto/rand. A token of that entropy cannot be
// guessed or brute-forced from its hash, so the file stores SHA-256(token):
// a slow password hash (argon2, scrypt) protects low-entropy secrets and
// would only cost CPU on every request here. Presented tokens are hashed
// and compared with every stored hash in constant time (crypto/subtle).
package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Scope is what a token allows.
type Scope string

// The scopes.
const (
	// ScopeIngest allows sending OTLP exports; their events are stored
	// under the token's tenant.
	ScopeIngest Scope = "ingest"
	// ScopeRead allows reading the drift reports of the token's tenant.
	ScopeRead Scope = "read"
	// ScopeAudit allows reading the call audit, with call arguments.
	ScopeAudit Scope = "audit"
	// ScopeDriftTest allows running the drift test from the API (POST
	// /api/v1/drifttest): the server then sends real tools/call requests
	// to an MCP server, on a host its operator allowed. Neither read nor
	// audit implies it: reading reports must not make the server call out.
	ScopeDriftTest Scope = "drifttest"
)

// Scopes lists every scope.
var Scopes = []Scope{ScopeIngest, ScopeRead, ScopeAudit, ScopeDriftTest}

// Errors of authentication.
var (
	// ErrNoToken: the request carries no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: the token is in no token file entry.
	ErrInvalidToken = errors.New("invalid bearer token")
	// ErrScope: the token lacks the scope the request needs.
	ErrScope = errors.New("token lacks the scope")
)

// TokenPrefix starts every token, so that secret scanners recognise one.
const TokenPrefix = "mcpdrift_"

// Record is one line of a token file: a token's identity, tenant and
// scopes, and the hex SHA-256 of the token, never the token itself.
type Record struct {
	// ID names the token in logs and listings; it is not secret.
	ID string `json:"id"`
	// Tenant owns everything the token sends and is all it may read.
	Tenant string `json:"tenant"`
	// Scopes are what the token allows.
	Scopes []Scope `json:"scopes"`
	// SHA256 is the hex SHA-256 of the token.
	SHA256 string `json:"sha256"`
	// Created is when the token was made.
	Created time.Time `json:"created"`
	// Description is the operator's note, if any.
	Description string `json:"description,omitempty"`
}

// Principal is who a request was authenticated as.
type Principal struct {
	// TokenID is the ID of the token.
	TokenID string
	// Tenant is the tenant the request is bound to.
	Tenant string
	// Scopes are what the token allows.
	Scopes []Scope
}

// Has reports whether p holds scope s.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Tokens is a loaded token file.
type Tokens struct {
	recs   []Record
	hashes [][sha256.Size]byte
}

// tenantRE is what a tenant name may be.
var tenantRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidTenant reports whether tenant is a usable tenant name: 1 to 64
// letters, digits, dots, underscores and dashes, starting with a letter
// or digit.
func ValidTenant(tenant string) error {
	if !tenantRE.MatchString(tenant) {
		return fmt.Errorf("invalid tenant %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", tenant)
	}
	return nil
}

// ParseScopes reads a comma-separated list of scopes.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		sc := Scope(strings.TrimSpace(part))
		if !slices.Contains(Scopes, sc) {
			return nil, fmt.Errorf("invalid scope %q: want ingest, read, audit or drifttest", sc)
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Load reads the token file at path.
func Load(path string) (*Tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the token file: %w", err)
	}
	t, err := Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("cannot load the token file %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a token file: one JSON Record a line; blank lines and lines
// starting with # are skipped.
func Parse(r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ids := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("line %d: cannot parse the record: %w", n, err)
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ids[rec.ID] {
			return nil, fmt.Errorf("line %d: token id %q appears twice", n, rec.ID)
		}
		ids[rec.ID] = true
		var h [sha256.Size]byte
		_, _ = hex.Decode(h[:], []byte(rec.SHA256))
		t.recs = append(t.recs, rec)
		t.hashes = append(t.hashes, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the token file: %w", err)
	}
	return t, nil
}

func (r Record) validate() error {
	if r.ID == "" {
		return errors.New("id: must not be empty")
	}
	if err := ValidTenant(r.Tenant); err != nil {
		return fmt.Errorf("tenant: %w", err)
	}
	if len(r.Scopes) == 0 {
		return errors.New("scopes: must not be empty")
	}
	for _, s := range r.Scopes {
		if !slices.Contains(Scopes, s) {
			return fmt.Errorf("scopes: invalid scope %q", s)
		}
	}
	if b, err := hex.DecodeString(r.SHA256); err != nil || len(b) != sha256.Size {
		return errors.New("sha256: want 64 hex digits")
	}
	return nil
}

// Len returns the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.recs)
}

// Tenants returns the distinct tenants of the tokens, sorted.
func (t *Tokens) Tenants() []string {
	var out []string
	for _, r := range t.recs {
		if !slices.Contains(out, r.Tenant) {
			out = append(out, r.Tenant)
		}
	}
	slices.Sort(out)
	return out
}

// Authenticate returns the principal of token. It hashes the token and
// compares the hash with every stored one in constant time, without
// stopping at a match.
func (t *Tokens) Authenticate(token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrNoToken
	}
	h := sha256.Sum256([]byte(token))
	match := -1
	for i := range t.hashes {
		if subtle.ConstantTimeCompare(t.hashes[i][:], h[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Principal{}, ErrInvalidToken
	}
	r := t.recs[match]
	return Principal{TokenID: r.ID, Tenant: r.Tenant, Scopes: slices.Clone(r.Scopes)}, nil
}

// Bearer returns the token of an Authorization header value
// ("Bearer <token>", the scheme case-insensitive).
func Bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Generate makes a new token for tenant with scopes: the token, to be shown
// once, and the record to store.
func Generate(tenant string, scopes []Scope, description string) (string, Record, error) {
	if err := ValidTenant(tenant); err != nil {
		return "", Record{}, err
	}
	if len(scopes) == 0 {
		return "", Record{}, errors.New("cannot create a token without scopes")
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", Record{}, fmt.Errorf("cannot read random bytes: %w", err)
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", Record{}, fmt.Errorf("cannot read random bytes: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])
	h := sha256.Sum256([]byte(token))
	return token, Record{
		ID:          hex.EncodeToString(id[:]),
		Tenant:      tenant,
		Scopes:      slices.Clone(scopes),
		SHA256:      hex.EncodeToString(h[:]),
		Created:     time.Now().UTC().Truncate(time.Second),
		Description: description,
	}, nil
}

// Append adds rec to the token file at path, creating it readable by its
// owner only. The file is checked first: a record is never appended to a
// file that does not load.
func Append(path string, rec Record) error {
	if err := rec.validate(); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		if _, err := Load(path); err != nil {
			return err
		}
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("cannot encode the token record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot open the token file: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the token file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot sync the token file %s: %w", path, err)
	}
	return f.Close()
}

// Loopback reports whether addr (host:port) listens on loopback only. An
// empty host, 0.0.0.0 or :: listen everywhere; a host name other than
// localhost is taken to be reachable.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckExposure refuses a listener reachable from other machines (addr,
// set by the flag named flagName) that runs without tokens, unless the
// operator allowed it explicitly with the flag named allowFlag.
func CheckExposure(flagName, addr string, tokens, allow bool, allowFlag string) error {
	if tokens || allow || Loopback(addr) {
		return nil
	}
	return fmt.Errorf("%s: %s is reachable from other machines and no token file is set: pass -auth.tokens-file, or -%s=true to serve every caller as the single local tenant", flagName, addr, allowFlag)
}

// AllowNoTokensFlag is the flag that allows serving without tokens on a
// non-loopback address.
const AllowNoTokensFlag = "auth.insecure-allow-no-tokens"

// Flags are the authentication flags of a command that serves.
type Flags struct {
	// TokensFile is the token file; empty runs without tokens.
	TokensFile string
	// AllowNoTokens allows serving without tokens on an address other
	// machines reach.
	AllowNoTokens bool
}

// Register registers -auth.tokens-file and -auth.insecure-allow-no-tokens.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.TokensFile, "auth.tokens-file", f.TokensFile, "token file (JSON lines, made by mcpdrift token create): every request then needs a bearer token, and is bound to the token's tenant")
	fs.BoolVar(&f.AllowNoTokens, AllowNoTokensFlag, f.AllowNoTokens, "allow listening on a non-loopback address without -auth.tokens-file: every caller is served as the single local tenant")
}

// Check refuses each listener (flag name → address) that other machines
// reach while no token file is set and AllowNoTokens is false.
func (f *Flags) Check(listeners ...[2]string) error {
	for _, l := range listeners {
		if err := CheckExposure(l[0], l[1], f.TokensFile != "", f.AllowNoTokens, AllowNoTokensFlag); err != nil {
			return err
		}
	}
	return nil
}

// Load loads the token file, nil without one.
func (f *Flags) Load() (*Tokens, error) {
	if f.TokensFile == "" {
		return nil, nil
	}
	t, err := Load(f.TokensFile)
	if err != nil {
		return nil, fmt.Errorf("auth.tokens-file: %w", err)
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("auth.tokens-file: %s holds no token: every request would be refused", f.TokensFile)
	}
	return t, nil
}

// Records returns the records of the tokens, in file order.
func (t *Tokens) Records() []Record { return slices.Clone(t.recs) }
