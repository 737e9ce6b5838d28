package queries_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestListCacheHint stores advertisements with and without a list cache
// hint (dev.mcpdrift.list.ttl_ms, dev.mcpdrift.list.cache_scope) and
// checks, against figures computed by hand, the registry's rows, the old
// list that DeployedNow builds from them, and the propagation report's
// longest hint per tool, from the narrow table and from the raw events.
//
//	refund 1  billing  at -30 min  ttl 86400000 public   } one revision,
//	refund 1  billing  at -20 min  ttl  3600000 private  } two batches
//	refund 2  billing  at  -3 h    ttl 172800000 private   before the window
//	charge 1  billing  at -10 min  no hint
//	charge 1  ledger   at -10 min  ttl   600000 public
//
// The window is [-1 h, +1 h) around base. refund's longest hint in it is
// 86400000 public (revision 2, 48 h, was advertised before the window);
// charge's is 600000 from ledger, none when the report is filtered to
// billing; tool "" (a notice naming no tool) takes the longest of all.
func TestListCacheHint(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := fmt.Sprintf("cachehint-%d", time.Now().UnixNano())
	base := fixture.Now.Add(-5 * time.Hour)
	at := func(d time.Duration) int64 { return base.Add(d).UnixNano() }
	ad := func(id uint64, d time.Duration, service, tool, rev string, ttl int64, scope string) otelschema.Event {
		return otelschema.Event{ID: id, Name: otelschema.EventAdvertised, Time: at(d), Service: service, ServiceInstance: service + "-0",
			Tool: tool, RevisionServer: rev, Definition: `{"name":"` + tool + `","inputSchema":{"type":"object"}}`,
			ListTTLMs: ttl, ListCacheScope: scope}
	}
	notice := func(id uint64, d time.Duration, session, tool string) otelschema.Event {
		return otelschema.Event{ID: id, Name: otelschema.EventListChanged, Time: at(d), SessionID: session, Service: "billing", Tool: tool}
	}
	batches := [][]otelschema.Event{
		{ad(1, -30*time.Minute, "billing", "refund", "1", 86400000, "public"), ad(2, -3*time.Hour, "billing", "refund", "2", 172800000, "private")},
		{ad(3, -20*time.Minute, "billing", "refund", "1", 3600000, "private"),
			ad(4, -10*time.Minute, "billing", "charge", "1", 0, ""), ad(5, -10*time.Minute, "ledger", "charge", "1", 600000, "public")},
		{notice(6, time.Minute, "s1", ""), notice(7, 2*time.Minute, "s1", "refund"), notice(8, 3*time.Minute, "s2", "charge")},
	}
	for _, b := range batches {
		if err := st.Write(c, store.Batch{Tenant: tenant, Events: b}); err != nil {
			t.Fatal(err)
		}
	}

	revs, err := r.ToolRevisions(c, queries.RegistryFilter{Tenant: tenant, Service: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	type hint struct {
		Tool, Revision string
		TTL            int64
		Scope          string
	}
	var gotRevs []hint
	for _, row := range revs {
		gotRevs = append(gotRevs, hint{row.Tool, row.Revision, row.ListTTLMs, row.ListCacheScope})
	}
	if want := []hint{{"charge", "1", 0, ""}, {"refund", "2", 172800000, "private"}, {"refund", "1", 86400000, "public"}}; !reflect.DeepEqual(gotRevs, want) {
		t.Errorf("registry hints %+v, want %+v", gotRevs, want)
	}

	// The old list of the release check: what billing advertises now
	// (within 10 min of its latest advertisement: refund 1 and charge 1),
	// with the longest hint among them.
	deployed, err := registry.DeployedNow(revs, registry.DefaultFreshness)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		TTLMs      int64             `json:"ttlMs"`
		CacheScope string            `json:"cacheScope"`
		Tools      []json.RawMessage `json:"tools"`
	}
	if len(deployed) != 1 {
		t.Fatalf("deployed %s, want billing alone", js(deployed))
	}
	if err := json.Unmarshal(deployed[0].List, &list); err != nil {
		t.Fatal(err)
	}
	if list.TTLMs != 86400000 || list.CacheScope != "public" || len(list.Tools) != 2 {
		t.Errorf("deployed list %s: want ttlMs 86400000, cacheScope public, 2 tools", deployed[0].List)
	}

	for _, cs := range []struct {
		service string
		want    map[string]hint
	}{
		{"", map[string]hint{"": {"", "", 86400000, "public"}, "charge": {"charge", "", 600000, "public"}, "refund": {"refund", "", 86400000, "public"}}},
		{"billing", map[string]hint{"": {"", "", 86400000, "public"}, "charge": {"charge", "", 0, ""}, "refund": {"refund", "", 86400000, "public"}}},
	} {
		f := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(time.Hour), Service: cs.service}
		got, err := r.Propagation(c, f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := r.RawPropagation(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, raw) {
			t.Errorf("service %q: propagation %s, raw %s", cs.service, js(got), js(raw))
		}
		hints := map[string]hint{}
		for _, row := range got {
			h := hint{Tool: row.Tool, Scope: row.ListCacheScope}
			if row.ListTTLMaxMs != nil {
				if *row.ListTTLMaxMs == 0 {
					t.Errorf("service %q tool %q: a hint of 0 ms is reported, want null", cs.service, row.Tool)
				}
				h.TTL = *row.ListTTLMaxMs
			}
			hints[row.Tool] = h
		}
		if !reflect.DeepEqual(hints, cs.want) {
			t.Errorf("service %q: propagation hints %+v, want %+v", cs.service, hints, cs.want)
		}
	}
}
