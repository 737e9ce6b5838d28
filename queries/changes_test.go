package queries_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// Definitions of deploy_preview: deployer advertises revision 1 and
// revision 2, which adds a required `region` with a default; mirror
// advertises other definitions under the same labels, where 2 adds an
// optional `note`, and last advertised them before deployer did.
// Revision 3 is never advertised.
const (
	preview1       = `{"name":"deploy_preview","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"]}}`
	preview2       = `{"name":"deploy_preview","inputSchema":{"type":"object","properties":{"branch":{"type":"string"},"region":{"type":"string","default":"us-east-preview"}},"required":["branch","region"]}}`
	mirrorPreview2 = `{"name":"deploy_preview","inputSchema":{"type":"object","properties":{"branch":{"type":"string"},"note":{"type":"string"}},"required":["branch"]}}`
)

// TestReportChanges stores advertisements of revisions 1 and 2 and calls
// on them, and checks the change of every stale-usage, rejection and
// adapter row against hand-computed classes and summaries (toolchange's
// findings, word for word), null where a revision is not advertised, on
// the rollups and on the raw events alike.
func TestReportChanges(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	r, err := queries.New(st, database, queries.WithChanges(registry.ChangeOf))
	if err != nil {
		t.Fatal(err)
	}
	tenant := fmt.Sprintf("changes-%d", time.Now().UnixNano())
	base := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	var events []otelschema.Event
	add := func(e otelschema.Event) {
		e.ID = uint64(len(events) + 1)
		if e.Environment == "" {
			e.Environment = "prod"
		}
		events = append(events, e)
	}
	advertise := func(service string, at time.Time, rev, def string) {
		add(otelschema.Event{Name: otelschema.EventAdvertised, Time: at.UnixNano(), Service: service, ServiceInstance: service + "-0",
			Tool: "deploy_preview", RevisionServer: rev, Definition: def})
	}
	advertise("mirror", base.Add(-48*time.Hour), "1", preview1)
	advertise("mirror", base.Add(-47*time.Hour), "2", mirrorPreview2)
	advertise("deployer", base.Add(-24*time.Hour), "1", preview1)
	advertise("deployer", base.Add(-time.Hour), "2", preview2)
	call := func(service, client string, n int, revClient, revServer string, outcome otelschema.Outcome, adapter string) {
		for i := range n {
			add(otelschema.Event{Name: otelschema.EventCall, Time: base.Add(time.Duration(len(events)+i) * time.Minute).UnixNano(),
				Service: service, Tool: "deploy_preview", SessionID: fmt.Sprintf("%s-%d", client, i), ClientName: client, ClientVersion: "1.0",
				RevisionClient: revClient, RevisionServer: revServer, Outcome: outcome, AdapterID: adapter,
				ErrorCode: map[bool]string{true: "STALE_TOOL_SCHEMA"}[outcome == otelschema.OutcomeRejectedStale]})
		}
	}
	call("deployer", "old-agent", 4, "1", "2", otelschema.OutcomeNormalized, "deploy_preview/1-2")
	call("deployer", "old-agent", 3, "1", "2", otelschema.OutcomeRejectedStale, "")
	call("deployer", "new-agent", 5, "2", "2", otelschema.OutcomeCurrent, "")
	call("deployer", "odd-agent", 2, "3", "2", otelschema.OutcomeRejectedStale, "")
	call("deployer", "mute-agent", 2, "", "2", otelschema.OutcomeCurrent, "")
	call("mirror", "old-agent", 1, "1", "2", otelschema.OutcomeRejectedStale, "")
	for _, a := range []struct{ id, from string }{{"deploy_preview/1-2", "1"}, {"deploy_preview/3-2", "3"}} {
		add(otelschema.Event{Name: otelschema.EventAdapter, Time: base.UnixNano(), Service: "deployer",
			Tool: "deploy_preview", AdapterID: a.id, AdapterRevisionFrom: a.from, AdapterRevisionTo: "2",
			ChangeClass: otelschema.ChangeClassBoundedMigration, AdapterWindowEnd: base.Add(30 * 24 * time.Hour).Unix()})
	}
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}

	const (
		required = "required `region` was added, with default \"us-east-preview\": old calls omit it"
		optional = "optional `note` was added"
	)
	type want struct{ class, summary string } // class "-": both null
	unknown := want{"-", ""}
	show := func(class, summary *string) want {
		switch {
		case class == nil && summary == nil:
			return unknown
		case class == nil || summary == nil:
			return want{"one of class and summary null", ""}
		}
		return want{*class, *summary}
	}
	all := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(2 * time.Hour)}
	mirror := all
	mirror.Service = "mirror"
	for _, tc := range []struct {
		name       string
		f          queries.Filter
		stale      map[string]want // by "client→server"
		rejections map[string]want // by "client→server/client name"
	}{
		{
			// Both services advertised 1 and 2: deployer, which advertised
			// 2 last, tells what 1 → 2 is.
			name: "all services", f: all,
			stale: map[string]want{"1→2": {"bounded_migration", required}, "2→2": {"", "no change"},
				"3→2": unknown, "→2": unknown},
			rejections: map[string]want{"1→2/old-agent": {"bounded_migration", required}, "3→2/odd-agent": unknown},
		},
		{
			name: "mirror", f: mirror,
			stale:      map[string]want{"1→2": {"additive", optional}},
			rejections: map[string]want{"1→2/old-agent": {"additive", optional}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rolled, err := r.StaleUsage(c, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := r.RawStaleUsage(c, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rolled, raw) {
				t.Errorf("stale usage from the rollups differs from raw:\nrollup %s\n   raw %s", js(rolled), js(raw))
			}
			got := map[string]want{}
			for _, row := range rolled {
				got[row.RevisionClient+"→"+row.RevisionServer] = show(row.ChangeClass, row.Change)
			}
			if !reflect.DeepEqual(got, tc.stale) {
				t.Errorf("stale usage changes:\n got %q\nwant %q", got, tc.stale)
			}

			rj, err := r.Rejections(c, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			rawRj, err := r.RawRejections(c, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rj, rawRj) {
				t.Errorf("rejections from the rollups differ from raw:\nrollup %s\n   raw %s", js(rj), js(rawRj))
			}
			got = map[string]want{}
			for _, row := range rj {
				got[row.RevisionClient+"→"+row.RevisionServer+"/"+row.ClientName] = show(row.ChangeClass, row.Change)
			}
			if !reflect.DeepEqual(got, tc.rejections) {
				t.Errorf("rejection changes:\n got %q\nwant %q", got, tc.rejections)
			}
		})
	}

	t.Run("adapters", func(t *testing.T) {
		o := retirement.Options{MaxCalls: 5, MaxShare: -1, UnknownSafe: true}
		rows, err := r.AdapterRetirement(c, all, o)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := r.RawAdapterRetirement(c, all, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rows, raw) {
			t.Errorf("adapter retirement from the rollups differs from raw:\nrollup %s\n   raw %s", js(rows), js(raw))
		}
		wantReason := map[string]string{
			"deploy_preview/1-2": "4 calls within the threshold, from sessions of unknown age with unknown privilege; " +
				"4 calls without a session age and 4 calls without a privilege and 2 calls to deploy_preview without a client revision, judged safe as asked; " +
				"it bridges 1 → 2: " + required,
			// 3 is not in the registry: nothing said of what it bridges.
			"deploy_preview/3-2": "no calls in the window; 2 calls to deploy_preview did not say which revision they were planned with, judged safe as asked",
		}
		wantChange := map[string]want{"deploy_preview/1-2": {"bounded_migration", required}, "deploy_preview/3-2": unknown}
		if len(rows) != len(wantReason) {
			t.Fatalf("%d adapters, want %d: %s", len(rows), len(wantReason), js(rows))
		}
		for _, a := range rows {
			if got := show(a.RegistryChangeClass, a.Change); got != wantChange[a.AdapterID] {
				t.Errorf("%s: change %q, want %q", a.AdapterID, got, wantChange[a.AdapterID])
			}
			if a.Reason != wantReason[a.AdapterID] {
				t.Errorf("%s: reason\n %q\nwant\n %q", a.AdapterID, a.Reason, wantReason[a.AdapterID])
			}
		}
	})

	t.Run("without WithChanges", func(t *testing.T) {
		plain, err := queries.New(st, database)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := plain.StaleUsage(c, all)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.ChangeClass != nil || row.Change != nil {
				t.Errorf("%s→%s: a change without a ChangeFunc: %s", row.RevisionClient, row.RevisionServer, js(row))
			}
		}
		if len(rows) == 0 || strings.Contains(js(rows), "region") {
			t.Errorf("rows %s", js(rows))
		}
	})
}
