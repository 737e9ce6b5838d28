package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/auth"
)

func TestTokenCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf", "tokens.jsonl")
	var out, errOut bytes.Buffer
	if code := run([]string{"token", "create", "--tenant", "acme", "--scope", "read", "-scope", "audit", "-file", path, "-description", "grafana"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	token := strings.TrimSpace(out.String())
	if !strings.HasPrefix(token, auth.TokenPrefix) || !strings.Contains(errOut.String(), "only time") {
		t.Fatalf("stdout %q, stderr %q", out.String(), errOut.String())
	}
	ts, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ts.Authenticate(token)
	if err != nil || p.Tenant != "acme" || !p.Has(auth.ScopeRead) || !p.Has(auth.ScopeAudit) {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	out.Reset()
	if code := run([]string{"token", "list", "-file", path}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "read,audit") || strings.Contains(out.String(), token) {
		t.Errorf("list: exit %d, %q", code, out.String())
	}
	// A header row names the columns, and the token's row lines up under it.
	lines := strings.Split(out.String(), "\n")
	head := -1
	for i, l := range lines {
		if strings.Fields(l) != nil && strings.Join(strings.Fields(l), " ") == "ID Tenant Scopes Created Description" {
			head = i
		}
	}
	if head < 0 || head+2 >= len(lines) {
		t.Fatalf("list has no header row:\n%s", out.String())
	}
	row := lines[head+2]
	if got := strings.Fields(row); len(got) != 5 || got[1] != "acme" || got[2] != "read,audit" || got[4] != "grafana" ||
		strings.Index(row, "acme") != strings.Index(lines[head], "Tenant") {
		t.Errorf("token row %q does not line up under %q", row, lines[head])
	}
	for _, args := range [][]string{
		{"token", "create", "-scope", "read", "-file", path},
		{"token", "create", "-tenant", "acme", "-file", path},
		{"token", "create", "-tenant", "acme", "-scope", "admin", "-file", path},
		{"token", "create", "-tenant", "a b", "-scope", "read", "-file", path},
		{"token", "rotate"},
	} {
		if code := run(args, &out, &errOut); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
