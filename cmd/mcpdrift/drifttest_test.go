package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/loopback"
)

// TestDrifttestErrors: what cannot run exits 2 with a message, before any
// call: a host not allowed, no -allow-host, bad flags, a server that does
// not answer.
func TestDrifttestErrors(t *testing.T) {
	old := "../../examples/driftserver/old.json"
	closed := "http://" + loopback.Addr(t) + "/mcp"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-server", "https://mcp.example.com/mcp", "-allow-host", "127.0.0.1,staging.example.com", old}, "mcp.example.com is not among the allowed hosts"},
		{[]string{"-server", "http://127.0.0.1:3001/mcp", old}, "no -allow-host given"},
		{[]string{"-server", "ftp://127.0.0.1/mcp", "-allow-host", "127.0.0.1", old}, "not an http or https URL"},
		{[]string{old}, "no server"},
		{[]string{"-server", closed, "-server-cmd", "x", "-allow-host", "127.0.0.1", old}, "name one"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-format", "yaml", old}, "-format"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", old, old}, "want one old list"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-max-calls", "0", old}, "at least 1"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", old}, "cannot connect"},
	} {
		code, out, errOut := mcpdrift(t, append([]string{"drifttest"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("drifttest %v: exit %d, stdout %q, stderr %q: want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestDrifttestDryRunJSON: a dry run over stdio prints the planned calls
// as JSON, unanswered, and exits 0.
func TestDrifttestDryRunJSON(t *testing.T) {
	server := filepath.Join(t.TempDir(), "driftserver")
	build(t, server, "../../examples/driftserver")
	code, out, errOut := mcpdrift(t, "drifttest", "-dry-run", "-format", "json", "-max-calls", "2",
		"-server-cmd", server+" -release 2", "../../examples/driftserver/old.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r drifttest.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !r.DryRun || len(r.Results) != 8 || r.Results[0].Answer != nil || r.Results[0].Pass != drifttest.PassDeclared ||
		r.Results[1].Pass != drifttest.PassStock || len(r.Unchanged) != 1 {
		t.Fatalf("dry run report: %s", out)
	}
}
