package redact

import (
	"slices"
	"strings"
	"testing"
)

// TestSecretKeys: the default rules' keys, on the keys MCP tools and
// OpenTelemetry attributes commonly carry. Keys that name a secret are
// redacted; keys that merely contain a rule's letters (a count of LLM
// tokens, an author, a keyboard layout) or describe a secret without
// holding it (its name, type, length) are not.
func TestSecretKeys(t *testing.T) {
	r := newTestRedactor(t, Rules{})
	secret := []string{
		"password", "Password", "PASSWORD", "passwd", "new_password", "password_confirmation", "passwordConfirm", "password2",
		"password_hash", "user.password", "passwords",
		"token", "api_token", "apiToken", "accessToken", "access_token", "refresh_token", "id_token", "auth_token", "X-Auth-Token",
		"token_value", "github_token", "oauth2Token", "bot-token",
		"secret", "client-secret", "client_secret", "clientSecret", "CLIENT_SECRET", "secret_b64", "secrets", "secret_key", "secretKey",
		"aws_secret_access_key", "SECRET_KEY",
		"Authorization", "authorization", "http.request.header.authorization", "proxy-authorization", "authorization_header",
		"api_key", "apiKey", "ApiKey", "APIKey", "apikey", "APIKEY", "X-Api-Key", "x-api-key", "openai_api_key", "api_keys",
		"access_key", "accessKey", "private_key", "privateKey", "private_key_pem", "ssh-private-key",
		"credential", "credentials", "gcp_credentials_json", "cookie", "Cookie", "set-cookie", "session_cookie", "cookies",
		"session_key", "sessionKey", "signature", "webhook_signature", "passphrase", "key_passphrase",
		"p.a-s_s w/o/r/d", // one letter a word: the words still spell password
	}
	benign := []string{
		"max_tokens", "maxTokens", "token_count", "tokenCount", "prompt_tokens", "completion_tokens", "total_tokens", "tokens",
		"input_tokens", "tokenizer", "token_type", "token_url", "tokenEndpoint", "token_limit", "token_expires_at",
		"author", "authors", "author_name", "keyboard", "keyboard_layout", "key", "keys", "monkey",
		"secretary", "secret_name", "secretName", "secret_id", "secretRef", "password_policy", "password_min_length",
		"passwordHint", "signature_algorithm", "signatureVersion", "cookie_domain", "cookie_name", "session_key_id",
		"credential_id", "credentialType", "api_key_id", "apiKeyName", "private_key_path", "public_key",
		"branch", "region", "q", "", "_", "2", "passw0rd", "tok", "🙂token🙂", "toke\n", "mytoken", "xapikey",
	}
	for _, k := range secret {
		if !r.secretKey(k) {
			t.Errorf("secretKey(%q) = false, want true", k)
		}
		if got := naiveSecretKey(r, k); !got {
			t.Errorf("the reference says %q is no secret key", k)
		}
	}
	for _, k := range benign {
		if r.secretKey(k) {
			t.Errorf("secretKey(%q) = true, want false", k)
		}
		if got := naiveSecretKey(r, k); got {
			t.Errorf("the reference says %q is a secret key", k)
		}
	}
	// In documents: the value under a benign key is kept, byte for byte;
	// under a secret key it is replaced.
	doc := `{"max_tokens": 256, "token_count": 3, "author": "ann", "keyboard": "de", "prompt_tokens": 12}`
	if got := r.Args(doc); got != doc {
		t.Errorf("Args(%s) = %s, want it unchanged", doc, got)
	}
	got := r.Args(`{"max_tokens":256,"api_token":"t1","accessToken":"t2","Authorization":"Basic Ym9i","password":"p","client-secret":"s"}`)
	want := `{"Authorization":"` + r.Marker("Basic Ym9i") + `","accessToken":"` + r.Marker("t2") + `","api_token":"` + r.Marker("t1") +
		`","client-secret":"` + r.Marker("s") + `","max_tokens":256,"password":"` + r.Marker("p") + `"}`
	if got != want {
		t.Errorf("Args\n got %s\nwant %s", got, want)
	}
}

// TestKeyRules: a configured key follows the same word rules.
func TestKeyRules(t *testing.T) {
	r := newTestRedactor(t, Rules{Keys: []string{"pin", "card-number"}, Defaults: new(bool)})
	for k, want := range map[string]bool{
		"pin": true, "PIN": true, "card_pin": true, "cardPin": true, "pin2": true, "pin_hash": true,
		"pinned": false, "spin": false, "pin_count": false, "pinCode": false,
		"card_number": true, "cardNumber": true, "CARDNUMBER": true, "credit-card-number": true, "number": false, "card": false,
		"password": false,
	} {
		if got := r.secretKey(k); got != want {
			t.Errorf("secretKey(%q) = %v, want %v", k, got, want)
		}
		if got := naiveSecretKey(r, k); got != want {
			t.Errorf("reference secretKey(%q) = %v, want %v", k, got, want)
		}
	}
	if _, err := New(Config{Rules: Rules{Keys: []string{"--"}}, Key: prefilterKey}); err == nil {
		t.Error("a key rule without a letter or digit was accepted")
	}
}

// naiveWords splits k into words as keyMatcher does, lower-cased: one rune
// class at a time, without the matcher's backward walk.
func naiveWords(k string) []string {
	var words []string
	var cur []byte
	for i := 0; i < len(k); i++ {
		c := k[i]
		if isSep(c) {
			if len(cur) > 0 {
				words, cur = append(words, string(cur)), nil
			}
			continue
		}
		if len(cur) > 0 {
			prev := k[i-1]
			camel := isUpper(c) && (isLower(prev) || isDigit(prev))
			acronym := isUpper(c) && isUpper(prev) && i+1 < len(k) && isLower(k[i+1])
			if camel || acronym {
				words, cur = append(words, string(cur)), nil
			}
		}
		cur = append(cur, fold(c))
	}
	if len(cur) > 0 {
		words = append(words, string(cur))
	}
	return words
}

// naiveSecretKey is secretKey by words: the qualifiers dropped from the
// end, then whether some run of last words, joined, is a rule's key.
func naiveSecretKey(r *Redactor, k string) bool {
	words := naiveWords(k)
	for len(words) > 0 && (strings.Trim(words[len(words)-1], "0123456789") == "" || slices.Contains(qualifiers, words[len(words)-1])) {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	words[len(words)-1] = strings.TrimRight(words[len(words)-1], "0123456789")
	rules := map[string]bool{}
	for _, rk := range r.keys {
		rules[ruleSpelling(rk)] = true
	}
	for i := range words {
		if rules[strings.Join(words[i:], "")] {
			return true
		}
	}
	return false
}

// FuzzKeyScan compares secretKey with the word-by-word reference.
func FuzzKeyScan(f *testing.F) {
	for _, s := range []string{"password", "x-api-key", "max_tokens", "a.p.i.k.e.y", "\xffsecret", "APIKey", "token_count",
		"password2_value", "Api-KEY", "oauth2Token"} {
		f.Add(s)
	}
	r := newTestRedactor(f, Rules{})
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := r.secretKey(k), naiveSecretKey(r, k); got != want {
			t.Fatalf("secretKey(%q) = %v, the words say %v (%q)", k, got, want, naiveWords(k))
		}
	})
}

// BenchmarkSecretKey decides keys of the kinds arguments and attributes
// carry; ns/op is per key.
func BenchmarkSecretKey(b *testing.B) {
	r := newTestRedactor(b, Rules{})
	keys := []string{"branch", "region", "max_tokens", "http.request.header.authorization", "apiKey", "password",
		"dev.mcpdrift.session.age_s", "gen_ai.tool.name", "query", "X-Api-Key"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.secretKey(keys[i%len(keys)])
	}
}
