package auth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/auth"
)

func TestTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.jsonl")
	tok, rec, err := auth.Generate("acme", []auth.Scope{auth.ScopeRead, auth.ScopeAudit}, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, auth.TokenPrefix) || len(tok) != len(auth.TokenPrefix)+43 {
		t.Errorf("token %q: want the prefix and 256 bits in base64url", tok)
	}
	if err := auth.Append(path, rec); err != nil {
		t.Fatal(err)
	}
	tok2, rec2, _ := auth.Generate("globex", []auth.Scope{auth.ScopeIngest}, "")
	if err := auth.Append(path, rec2); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), tok) || strings.Contains(string(data), tok2) {
		t.Fatal("a token is stored in clear")
	}
	ts, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ts.Authenticate(tok)
	if err != nil || p.Tenant != "acme" || !p.Has(auth.ScopeAudit) || p.Has(auth.ScopeIngest) || p.TokenID != rec.ID {
		t.Errorf("Authenticate = %+v, %v", p, err)
	}
	if p, err := ts.Authenticate(tok2); err != nil || p.Tenant != "globex" {
		t.Errorf("Authenticate(tok2) = %+v, %v", p, err)
	}
	for _, bad := range []string{"", tok + "x", tok[:len(tok)-1], strings.ToUpper(tok), rec.SHA256} {
		if _, err := ts.Authenticate(bad); err == nil {
			t.Errorf("Authenticate(%q) succeeded", bad)
		}
	}
	if got := ts.Tenants(); len(got) != 2 || got[0] != "acme" {
		t.Errorf("Tenants = %v", got)
	}
}

func TestParseRefuses(t *testing.T) {
	good := `{"id":"a","tenant":"acme","scopes":["read"],"sha256":"` + strings.Repeat("ab", 32) + `"}`
	for _, c := range []struct{ file, want string }{
		{good + "\n# comment\n\n", ""},
		{`{"id":"a"`, "line 1"},
		{strings.Replace(good, `"acme"`, `"ac me"`, 1), "tenant"},
		{strings.Replace(good, `"acme"`, `""`, 1), "tenant"},
		{strings.Replace(good, `["read"]`, `["admin"]`, 1), "scope"},
		{strings.Replace(good, `["read"]`, `[]`, 1), "scopes"},
		{strings.Replace(good, "abab", "zz", 1), "sha256"},
		{strings.Replace(good, `"id":"a"`, `"id":"a","token":"x"`, 1), "unknown field"},
		{good + "\n" + good, "twice"},
	} {
		_, err := auth.Parse(strings.NewReader(c.file))
		if (err != nil) != (c.want != "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Parse(%q): %v, want %q", c.file, err, c.want)
		}
	}
}

func TestBearerAndLoopback(t *testing.T) {
	for h, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "BEARER abc": "abc", "Basic abc": "", "abc": "", "Bearer ": ""} {
		if got, _ := auth.Bearer(h); got != want {
			t.Errorf("Bearer(%q) = %q, want %q", h, got, want)
		}
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:1": true, "localhost:1": true, "127.1.2.3:1": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:1": false, "10.0.0.1:1": false, "example.com:1": false, "nonsense": false,
	} {
		if got := auth.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
	if err := auth.CheckExposure("api.listen", "0.0.0.0:1", false, false, auth.AllowNoTokensFlag); err == nil || !strings.Contains(err.Error(), auth.AllowNoTokensFlag) {
		t.Errorf("CheckExposure: %v", err)
	}
}

func TestTLSConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  auth.TLSConfig
		want string
	}{
		{auth.TLSConfig{}, ""},
		{auth.TLSConfig{CertFile: "c", KeyFile: "k"}, ""},
		{auth.TLSConfig{CertFile: "c"}, "x.key-file"},
		{auth.TLSConfig{KeyFile: "k"}, "x.cert-file"},
		{auth.TLSConfig{ClientCAFile: "ca"}, "x.client-ca-file"},
	} {
		err := c.cfg.Validate("x")
		if (err != nil) != (c.want != "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := (auth.TLSConfig{CertFile: "/nonexistent", KeyFile: "/nonexistent"}).Server(); err == nil {
		t.Error("Server with missing files succeeded")
	}
}
