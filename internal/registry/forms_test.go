package registry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestRevisionForms upgrades the deployer from mcpdrift's v1 digests to a
// declared SEP-2636 tool digest, the definition unchanged, on the
// embedded store, the instances real SDK servers instrumented by mcpgo:
//
//	T0       pod-a (v1 digests) starts with deploy_preview: revision D
//	T0+60m   pod-b starts with the same definition, its tool digest
//	         declared: revision T
//	T0+65m   a stock client calls pod-b 3 times planning with D
//	T0+70m   pod-a re-advertises D, then stops
//
// Hand-computed: the history holds D (mcpdrift-v1, T0 to T0+70m, 2
// advertisements) and T (sha256-jcs-tool, T0+60m, 1 advertisement, 600 s
// alongside D), and the change from D to T is no change, not a removal
// and an addition: revisions of two forms compare by their definitions.
// The 3 calls ran as current, D → T, and the stale-usage row says no
// change and not stale (one contract under two names), from the rollups
// and from the raw events; the stale-usage and audit series count the 3
// calls and 0 stale ones.
func TestRevisionForms(t *testing.T) {
	ctx := context.Background()
	st, db := backends[0].open(t)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	in := startIngest(t, st)
	addr := in.GRPCAddr().String()
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour)
	now := t0
	at := func(d time.Duration) { now = t0.Add(d) }

	tool := func() *mcp.Tool {
		return &mcp.Tool{Name: "deploy_preview", Description: "Deploy a branch to a preview environment.", InputSchema: deploySchema("", "branch")}
	}
	d, err := mcpgo.Digest(tool())
	if err != nil {
		t.Fatal(err)
	}
	td, err := mcpgo.ToolDigest(tool())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := mcpgo.ToolRevision(td)
	if err != nil {
		t.Fatal(err)
	}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed"}}}, nil
	}

	a := start(t, addr, "pod-a", &now)
	if err := a.drift.AddTool(tool(), handler, mcpgo.Contract{Privilege: otelschema.PrivilegeWrite}); err != nil {
		t.Fatal(err)
	}
	at(60 * time.Minute)
	pb := start(t, addr, "pod-b", &now)
	if err := pb.drift.AddTool(tool(), handler, mcpgo.Contract{ToolDigest: td, Privilege: otelschema.PrivilegeWrite}); err != nil {
		t.Fatal(err)
	}
	at(65 * time.Minute)
	pb.call(t, d, 3)
	at(70 * time.Minute)
	a.drift.EmitAdvertised(ctx)
	a.stop(t)
	pb.stop(t)

	runner, err := queries.New(st, db, queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runner.ToolRevisions(ctx, queries.RegistryFilter{Tenant: store.DefaultTenant, Tools: []string{"deploy_preview"}})
	if err != nil {
		t.Fatal(err)
	}
	h := registry.Histories(rows)
	if len(h) != 1 || len(h[0].Revisions) != 2 {
		t.Fatalf("histories %+v, want deployer's, with 2 revisions", h)
	}
	var got []string
	for _, r := range h[0].Revisions {
		f := fmt.Sprintf("%s %s %s-%s %d", short(r.Revision, d, tr), r.Algorithm, r.FirstAdvertised.Sub(t0), r.LastAdvertised.Sub(t0), r.Advertisements)
		if r.OverlapS != nil {
			f += fmt.Sprintf(" overlap %d", *r.OverlapS)
		}
		if r.Change != nil {
			f += fmt.Sprintf(" change %q %q", r.Change.Class, r.Change.Summary)
		}
		got = append(got, f)
	}
	want := []string{
		"D mcpdrift-v1 0s-1h10m0s 2",
		`T sha256-jcs-tool 1h0m0s-1h0m0s 1 overlap 600 change "" "no change"`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history:\n got %q\nwant %q", got, want)
	}
	if l := h[0].Revisions[1].AlgorithmLabel; l != "sha256-jcs-tool (SEP-2636)" {
		t.Errorf("label %q", l)
	}
	diff, err := registry.DiffOf(rows, d, tr)
	if err != nil || diff.Class != "" || diff.Summary != "no change" {
		t.Errorf("diff D → T: %+v, %v", diff.RevisionChange, err)
	}

	f := queries.Filter{Tenant: store.DefaultTenant, From: t0, To: t0.Add(130 * time.Minute), Tool: "deploy_preview"}
	for name, get := range map[string]func(context.Context, queries.Filter) ([]apiv1.StaleUsageRow, error){
		"rollups": runner.StaleUsage, "raw": runner.RawStaleUsage} {
		rows, err := get(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			s := fmt.Sprintf("%s→%s %d calls, %d current", short(r.RevisionClient, d, tr), short(r.RevisionServer, d, tr), r.Calls, r.Current)
			if r.Stale != nil {
				s += fmt.Sprintf(" stale=%t", *r.Stale)
			}
			if r.ChangeClass != nil && r.Change != nil {
				s += fmt.Sprintf(" %q %q", *r.ChangeClass, *r.Change)
			}
			got = append(got, s)
		}
		if want := `[D→T 3 calls, 3 current stale=false "" "no change"]`; fmt.Sprint(got) != want {
			t.Errorf("stale usage from the %s:\n got %s\nwant %s", name, got, want)
		}
	}
	// The series count those calls, none of them stale.
	usage, err := runner.StaleUsageSeries(ctx, f, queries.SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	audit, err := runner.AuditSeries(ctx, queries.AuditFilter{Filter: f}, queries.SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sums [4]uint64
	for _, p := range usage.Points {
		sums[0], sums[1] = sums[0]+p.Calls, sums[1]+p.StaleCalls
	}
	for _, p := range audit.Points {
		sums[2], sums[3] = sums[2]+p.Calls, sums[3]+p.StaleCalls
	}
	if sums != [4]uint64{3, 0, 3, 0} {
		t.Errorf("stale-usage series %d calls, %d stale; audit series %d calls, %d stale: want 3 and 0 each", sums[0], sums[1], sums[2], sums[3])
	}
}

// short names the test's two revisions D and T.
func short(rev, d, t string) string {
	switch rev {
	case d:
		return "D"
	case t:
		return "T"
	}
	return rev
}
