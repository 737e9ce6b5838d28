package registry_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/queries"
)

// TestHistoryCacheHint: each revision of a history carries the cache
// hint its lists were advertised with, in JSON only where there is one,
// and `mcpdrift revisions` prints it as the LIST TTL column: 172800000 ms
// shared is "48h shared", 500 ms without a scope "500ms", none "-".
func TestHistoryCacheHint(t *testing.T) {
	t0 := time.Date(2099, 3, 6, 12, 0, 0, 0, time.UTC)
	def := `{"name":"deploy_preview","inputSchema":{"type":"object"}}`
	row := func(rev string, at time.Duration, ttl int64, scope string) queries.ToolRevisionRow {
		return queries.ToolRevisionRow{Tool: "deploy_preview", Service: "deployer", Environment: "prod", Revision: rev, Definition: def,
			FirstAdvertised: t0.Add(at), LastAdvertised: t0.Add(at + time.Hour), Instances: []string{"deployer-0"}, Advertisements: 1,
			ListTTLMs: ttl, ListCacheScope: scope}
	}
	h := registry.Histories([]queries.ToolRevisionRow{row("1", 0, 0, ""), row("2", 2*time.Hour, 172800000, "shared"), row("3", 4*time.Hour, 500, "")})
	if len(h) != 1 || len(h[0].Revisions) != 3 {
		t.Fatalf("histories %+v", h)
	}
	for i, want := range []string{`"advertisements":1,"overlap_s":null`, `"list_ttl_ms":172800000,"list_cache_scope":"shared"`, `"list_ttl_ms":500,"previous"`} {
		b, err := json.Marshal(h[0].Revisions[i])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("revision %d: %s lacks %s", i+1, b, want)
		}
	}
	var out bytes.Buffer
	if err := registry.WriteText(&out, "deploy_preview", h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"REVISION  ALGORITHM  FIRST ADVERTISED      LAST ADVERTISED       INSTANCES  LIST TTL    OVERLAP  CHANGE\n",
		"1         declared   2099-03-06 12:00:00Z  2099-03-06 13:00:00Z  1          -           -        -\n",
		"2         declared   2099-03-06 14:00:00Z  2099-03-06 15:00:00Z  1          48h shared  0s       (none): no change\n",
		"3         declared   2099-03-06 16:00:00Z  2099-03-06 17:00:00Z  1          500ms       0s       (none): no change\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, out.String())
		}
	}
}
