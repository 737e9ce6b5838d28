package redact_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func newRedactor(t testing.TB, rules redact.Rules) *redact.Redactor {
	t.Helper()
	r, err := redact.New(redact.Config{Rules: rules, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var markerAnywhere = regexp.MustCompile(`\[REDACTED:hmac:[0-9a-f]{12}\]`)

func TestArgs(t *testing.T) {
	r := newRedactor(t, redact.Rules{Paths: []string{"$.auth.pin", "$.headers[*].value", "$..cookie_jar", "$.list[1]"}})
	m := r.Marker
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"nothing", `{"branch":"main","n":3}`, `{"branch":"main","n":3}`},
		{"formatting kept without secrets", `{ "b" : 1,  "a": [ 1 ] }`, `{ "b" : 1,  "a": [ 1 ] }`},
		{"password key", `{"user":"bob","password":"hunter2"}`, `{"password":"` + m("hunter2") + `","user":"bob"}`},
		{"key variants", `{"X-Api-Key":"k1","apiKey":"k2","client_secret":"s","Authorization":"Basic Ym9i"}`,
			`{"Authorization":"` + m("Basic Ym9i") + `","X-Api-Key":"` + m("k1") + `","apiKey":"` + m("k2") + `","client_secret":"` + m("s") + `"}`},
		{"non-string secret", `{"token":{"a":1},"pin":1234}`, `{"pin":1234,"token":"` + m(`{"a":1}`) + `"}`},
		{"null secret stays null", `{"password":null}`, `{"password":null}`},
		{"nested and arrays", `{"a":[{"password":"x"}]}`, `{"a":[{"password":"` + m("x") + `"}]}`},
		{"path", `{"auth":{"pin":"0000","user":"u"}}`, `{"auth":{"pin":"` + m("0000") + `","user":"u"}}`},
		{"path wildcard", `{"headers":[{"name":"X-A","value":"v1"},{"name":"X-B","value":"v2"}]}`,
			`{"headers":[{"name":"X-A","value":"` + m("v1") + `"},{"name":"X-B","value":"` + m("v2") + `"}]}`},
		{"deep path", `{"a":{"b":{"cookie_jar":["c"]}}}`, `{"a":{"b":{"cookie_jar":"` + m(`["c"]`) + `"}}}`},
		{"path index", `{"list":["a","b","c"]}`, `{"list":["a","` + m("b") + `","c"]}`},
		{"credentials in a key", `{"mirrors":{"https://u:pw@x.example/":"GET"}}`, `{"mirrors":{"https://u:` + m("pw") + `@x.example/":"GET"}}`},
		{"bearer in value", `{"header":"Bearer abcdefgh12345678"}`, `{"header":"Bearer ` + m("abcdefgh12345678") + `"}`},
		{"aws key in value", `{"note":"use AKIAIOSFODNN7EXAMPLE now"}`, `{"note":"use ` + m("AKIAIOSFODNN7EXAMPLE") + ` now"}`},
		{"private key block", `{"k":` + mustJSON(pem) + `}`, `{"k":"` + m(pem) + `"}`},
		{"not JSON", "curl -H 'Authorization: Bearer abcdefgh12345678' https://u:pw@x.example/?api_key=zzz1",
			"curl -H 'Authorization: Bearer " + m("abcdefgh12345678") + "' https://u:" + m("pw") + "@x.example/?api_key=" + m("zzz1")},
		{"truncated JSON is text", `{"password":"hunter2`, `{"password":"hunter2`},
		{"JSON string", `"token=abcdef"`, `"token=` + m("abcdef") + `"`},
		{"number", `42`, `42`},
		{"github token", `{"t":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, `{"t":"` + m("ghp_abcdefghijklmnopqrstuvwxyz0123456789") + `"}`},
		{"jwt", `{"id":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop"}`, `{"id":"` + m("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop") + `"}`},
		{"html not escaped", `{"password":"<&>","q":"<&>"}`, `{"password":"` + m("<&>") + `","q":"<&>"}`},
		{"marker kept", `{"password":"` + m("x") + `"}`, `{"password":"` + m("x") + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Args(tc.in)
			if got != tc.want {
				t.Errorf("Args(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
			if again := r.Args(got); again != got {
				t.Errorf("not idempotent: %s → %s", got, again)
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestMarkerIsKeyedAndStable(t *testing.T) {
	a := newRedactor(t, redact.Rules{})
	b, err := redact.New(redact.Config{Key: []byte("another key, another hash......")})
	if err != nil {
		t.Fatal(err)
	}
	if a.Marker("s3cret") != a.Marker("s3cret") {
		t.Error("equal secrets, different markers")
	}
	if a.Marker("s3cret") == a.Marker("s3cret2") {
		t.Error("different secrets, equal markers")
	}
	if a.Marker("s3cret") == b.Marker("s3cret") {
		t.Error("the marker does not depend on the key")
	}
	if !redact.IsMarker(a.Marker("x")) || redact.IsMarker("[REDACTED:hmac:zz]") {
		t.Error("IsMarker")
	}
	eph, _ := redact.New(redact.Config{})
	if !eph.Ephemeral() || a.Ephemeral() {
		t.Error("Ephemeral")
	}
}

func TestEvents(t *testing.T) {
	r := newRedactor(t, redact.Rules{})
	events := []otelschema.Event{{
		ArgsRaw:        `{"password":"p","q":"x"}`,
		ArgsNormalized: `{"Password":"p"}`,
		ExternalTarget: "https://user:pw@api.example/v1",
		Attributes:     map[string]string{"http.request.header.authorization": "Bearer abcdefgh12345678", "note": "key AKIAIOSFODNN7EXAMPLE", "plain": "ok"},
	}}
	r.Events(events)
	e := events[0]
	if strings.Contains(e.ArgsRaw, `"p"`) || strings.Contains(e.ArgsNormalized, `"p"`) {
		t.Errorf("arguments not redacted: %s %s", e.ArgsRaw, e.ArgsNormalized)
	}
	if e.ArgsRaw != `{"password":"`+r.Marker("p")+`","q":"x"}` {
		t.Errorf("ArgsRaw = %s", e.ArgsRaw)
	}
	if strings.Contains(e.ExternalTarget, "pw@") {
		t.Errorf("ExternalTarget = %s", e.ExternalTarget)
	}
	if e.Attributes["http.request.header.authorization"] != r.Marker("Bearer abcdefgh12345678") {
		t.Errorf("authorization attribute = %s", e.Attributes["http.request.header.authorization"])
	}
	if strings.Contains(e.Attributes["note"], "AKIA") || e.Attributes["plain"] != "ok" {
		t.Errorf("attributes = %v", e.Attributes)
	}
	if r.Redacted() != 5 {
		t.Errorf("Redacted() = %d, want 5", r.Redacted())
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	f := func(name, body, wantErr string) redact.Rules {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		rules, err := redact.LoadRules(p)
		if err == nil {
			_, err = redact.New(redact.Config{Rules: rules, Key: testKey})
		}
		if (err != nil) != (wantErr != "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Fatalf("%s: error %v, want %q", name, err, wantErr)
		}
		return rules
	}
	rules := f("rules.yaml", "keys: [pin]\npaths: ['$.card.number']\npatterns: ['\\bcard-[0-9]{4}\\b']\n", "")
	r := newRedactor(t, rules)
	if got := r.Args(`{"pin":"1","card":{"number":"4111"},"n":"card-1234","password":"p"}`); strings.Contains(got, `"1"`) || strings.Contains(got, "4111") || strings.Contains(got, "card-1234") || strings.Contains(got, `"p"`) {
		t.Errorf("rules file not applied (defaults included): %s", got)
	}
	only := f("rules.json", `{"keys":["pin"],"defaults":false}`, "")
	r = newRedactor(t, only)
	if got := r.Args(`{"pin":"1","password":"p"}`); !strings.Contains(got, `"password":"p"`) {
		t.Errorf("defaults:false still applies the defaults: %s", got)
	}
	f("bad.yaml", "keyz: [pin]\n", "keyz")
	f("badre.yaml", "patterns: ['(']\n", "cannot compile")
	f("badpath.yaml", "paths: ['a.b']\n", "must start with $")
}

// FuzzRedact checks, for any argument document, that Args does not panic,
// keeps valid JSON valid and UTF-8 UTF-8, leaves no default pattern match
// but inside a marker, and is idempotent.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		`{"password":"hunter2"}`, `{"a":[{"token":1}],"b":"Bearer abcdefgh12345678"}`,
		"AKIAIOSFODNN7EXAMPLE", "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----",
		`"https://u:p@h/"`, "password=x&token=y", `[REDACTED:hmac:0123456789ab]`, `{"":null}`, "\xff",
		`{"https://u:pw@h/":1}`, `"\token=abcdef"`, `"\bearer abcdefgh12345678"`,
	} {
		f.Add(s)
	}
	r, err := redact.New(redact.Config{Key: testKey, Rules: redact.Rules{Paths: []string{"$..x", "$.a[*]"}}})
	if err != nil {
		f.Fatal(err)
	}
	var patterns []*regexp.Regexp
	for _, p := range redact.DefaultRules().Patterns {
		patterns = append(patterns, regexp.MustCompile(p))
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := r.Args(s)
		if json.Valid([]byte(s)) && !json.Valid([]byte(got)) {
			t.Fatalf("valid JSON became invalid: %q → %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("UTF-8 became invalid: %q → %q", s, got)
		}
		if again := r.Args(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
		// What a reader of the output sees: the text, or, for a JSON
		// document, each of its strings and keys as decoded (an escape
		// such as \t spells letters in the text that no string holds).
		texts := []string{got}
		if json.Valid([]byte(s)) {
			texts = jsonTexts(t, got)
		}
		for _, text := range texts {
			stripped := markerAnywhere.ReplaceAllString(text, "")
			for _, re := range patterns {
				if loc := re.FindStringSubmatchIndex(stripped); loc != nil && !strings.Contains(text, redact.MarkerPrefix) {
					t.Fatalf("%q survives in %q (output %q)", stripped[loc[0]:loc[1]], text, got)
				}
			}
		}
	})
}

// jsonTexts returns every string and object key of the JSON document s,
// decoded.
func jsonTexts(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output %q does not decode: %v", s, err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestEventIdentifiersRedacted: a secret a client puts in an identifier
// or an error code is redacted by pattern, as one in an argument is; an
// identifier without a secret is kept.
func TestEventIdentifiersRedacted(t *testing.T) {
	r := newRedactor(t, redact.Rules{})
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop"
	events := []otelschema.Event{{
		RequestID: "req-" + jwt, SessionID: jwt, RunID: "run token=abc123", ServiceInstance: "https://u:pw@host/",
		IdempotencyKey: "ghp_abcdefghijklmnopqrstuvwxyz0123456789", RetryOf: "Bearer abcdefgh12345678",
		ErrorCode: "AKIAIOSFODNN7EXAMPLE",
	}, {RequestID: "42", SessionID: "sess-1", RunID: "run-1", ErrorCode: "STALE_TOOL_SCHEMA"}}
	r.Events(events)
	e := events[0]
	for name, v := range map[string]string{"request id": e.RequestID, "session id": e.SessionID, "run id": e.RunID,
		"service instance": e.ServiceInstance, "idempotency key": e.IdempotencyKey, "retry of": e.RetryOf, "error code": e.ErrorCode} {
		if !markerAnywhere.MatchString(v) {
			t.Errorf("%s %q: not redacted", name, v)
		}
	}
	if e.SessionID != r.Marker(jwt) {
		t.Errorf("session id %q, want the marker of the JWT, the same wherever it appears", e.SessionID)
	}
	if k := events[1]; k.RequestID != "42" || k.SessionID != "sess-1" || k.RunID != "run-1" || k.ErrorCode != "STALE_TOOL_SCHEMA" {
		t.Errorf("identifiers without secrets changed: %+v", k)
	}
}
