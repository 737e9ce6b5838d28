package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestCheckDeployedCacheHint: a service that advertised
// examples/tools-list/old.json with a cache hint of 48 h (ttlMs
// 172800000, cacheScope shared) has that hint on its revisions in the
// tool's history, and on the old list the check
// takes from the registry, so the check against new.json says it, in
// old_cache and in the reason of every change that is not safe, as the
// check of a list file that carries the hint does.
func TestCheckDeployedCacheHint(t *testing.T) {
	tenant := fmt.Sprintf("cachehint-%d", time.Now().UnixNano())
	s, fx := newServer(t, tenant)
	var old struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(readFile(t, "../../examples/tools-list/old.json"), &old); err != nil {
		t.Fatal(err)
	}
	var events []otelschema.Event
	for i, tool := range old.Tools {
		delete(tool, "_meta")
		def, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventAdvertised, Time: fx.Now.Add(-time.Minute).UnixNano(),
			Service: "hinted", Environment: "prod", ServiceInstance: "hinted-0", Tool: tool["name"].(string), RevisionServer: "1",
			Definition: string(def), ListTTLMs: 172800000, ListCacheScope: "shared"})
	}
	if err := fx.Store.Write(context.Background(), store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}

	// The tool's history names the hint on its revision, as the JSON
	// answer carries it (omitted where a revision has none: TestRevisions).
	hist := get(t, s.Handler(), "/api/v1/tools/create_issue/revisions?service=hinted", "")
	if hist.status != http.StatusOK {
		t.Fatalf("revisions: %d %s", hist.status, hist.body)
	}
	var h apiv1.RevisionsBody
	if err := json.Unmarshal(hist.body, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Histories) != 1 || len(h.Histories[0].Revisions) != 1 {
		t.Fatalf("histories %s, want one revision", hist.body)
	}
	if r := h.Histories[0].Revisions[0]; r.ListTTLMs != 172800000 || r.ListCacheScope != "shared" ||
		!strings.Contains(string(hist.body), `"list_ttl_ms":172800000,"list_cache_scope":"shared"`) {
		t.Errorf("revision %+v, want list_ttl_ms 172800000, list_cache_scope shared: %s", r, hist.body)
	}

	var req apiv1.CheckRequest
	req.New = json.RawMessage(readFile(t, "../../examples/tools-list/new.json"))
	b, _ := json.Marshal(req)
	body := decodeCheck(t, post(t, s.Handler(), "/api/v1/check?service=hinted", b))
	if body.OldCache == nil || body.OldCache.TTLMs != 172800000 || body.OldCache.Scope != "shared" {
		t.Fatalf("old_cache %+v, want ttl 172800000 shared", body.OldCache)
	}
	const hint = "clients may keep the old list for up to 48h without listing again (ttlMs 172800000, cacheScope shared)"
	// named maps each tool to its verdict and whether its reason names
	// the hint: every change the check did not find safe on its own
	// (changed or removed tools, here) names it.
	named := func(b apiclient.CheckBody) map[string]string {
		m := map[string]string{}
		for _, c := range b.Tools {
			m[c.Tool] = fmt.Sprintf("%s %v", c.Verdict, strings.Contains(c.Reason, hint))
		}
		return m
	}
	reg := named(body)
	if want := map[string]string{"create_issue": "violation true", "delete_branch": "safe true", "deploy_preview": "safe true", "search_docs": "safe false"}; !reflect.DeepEqual(reg, want) {
		t.Errorf("verdicts and hints from the registry %v, want %v", reg, want)
	}

	// The same check with the old list as a file that carries the hint.
	var withHint map[string]any
	if err := json.Unmarshal(readFile(t, "../../examples/tools-list/old.json"), &withHint); err != nil {
		t.Fatal(err)
	}
	withHint["ttlMs"], withHint["cacheScope"] = 172800000, "shared"
	req.Old, _ = json.Marshal(withHint)
	b, _ = json.Marshal(req)
	r := post(t, s.Handler(), "/api/v1/check", b)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	file := decodeCheck(t, r)
	if got := named(file); !reflect.DeepEqual(got, reg) || file.OldCache == nil || *file.OldCache != *body.OldCache {
		t.Errorf("with the list file: %v, old_cache %+v; from the registry %v, %+v", got, file.OldCache, reg, body.OldCache)
	}
}
