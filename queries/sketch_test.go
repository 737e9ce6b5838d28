package queries_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestSessionSketchesBeyondSmallSets counts hundreds of sessions and runs
// per tool, beyond the 16 a sketch holds exactly (the fixture's sets are
// smaller), written in many inserts so that the views leave many partial
// states: the reports from the rollups must still equal their raw twins
// (the sketch depends on the set only, not on how it was merged), and be
// close to the exact counts.
func TestSessionSketchesBeyondSmallSets(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := "sketches"
	// Three tools with about 40, 300 and 900 distinct sessions over 30
	// hours that end 20 minutes before the clock, in 24 inserts.
	sessions := map[string]int{"small_tool": 40, "mid_tool": 300, "big_tool": 900}
	exact := map[string]map[string]bool{}
	start := fixture.Now.Add(-30*time.Hour - 20*time.Minute)
	const calls, inserts = 12000, 24
	var batch []otelschema.Event
	for i := range calls {
		tool := []string{"small_tool", "mid_tool", "big_tool"}[i%3]
		s := fmt.Sprintf("sess-%s-%d", tool, (i/3*7919)%sessions[tool])
		if exact[tool] == nil {
			exact[tool] = map[string]bool{}
		}
		exact[tool][s] = true
		batch = append(batch, otelschema.Event{
			ID: uint64(5_000_000 + i), Name: otelschema.EventCall,
			Time:      start.Add(time.Duration(i) * 30 * time.Hour / calls).UnixNano(),
			Tool:      tool,
			SessionID: s, RunID: "run-" + s,
			RevisionClient: "1", RevisionServer: "2", Outcome: otelschema.OutcomeNormalized,
			AdapterID: tool + "-1-to-2", ClientName: "agent", ClientVersion: "1.0",
		})
		if len(batch) == calls/inserts {
			if err := st.Write(c, store.Batch{Tenant: tenant, Events: batch}); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	windows := []queries.Filter{
		{Tenant: tenant, From: fixture.Now.Add(-7 * 24 * time.Hour), To: fixture.Now},
		// Ragged edges: minutes, hours and a day.
		{Tenant: tenant, From: start.Add(37 * time.Minute), To: fixture.Now.Add(-43 * time.Minute)},
	}
	for _, f := range windows {
		got, err := r.StaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.RawStaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v..%v: stale usage from the rollups %s, raw %s", f.From, f.To, js(got), js(want))
		}
		rj, err := r.Rejections(c, f)
		if err != nil {
			t.Fatal(err)
		}
		rawRj, err := r.RawRejections(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rj, rawRj) {
			t.Errorf("%v..%v: rejections from the rollups %s, raw %s", f.From, f.To, js(rj), js(rawRj))
		}
		ar, err := r.AdapterRetirement(c, f, retire)
		if err != nil {
			t.Fatal(err)
		}
		rawAr, err := r.RawAdapterRetirement(c, f, retire)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ar, rawAr) {
			t.Errorf("%v..%v: adapter retirement from the rollups %s, raw %s", f.From, f.To, js(ar), js(rawAr))
		}
	}
	// The week holds every call: the estimates against the exact counts.
	rows, err := r.StaleUsage(c, windows[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sessions) {
		t.Fatalf("stale usage has %d rows, want one per tool (%d): %s", len(rows), len(sessions), js(rows))
	}
	for _, row := range rows {
		n := float64(len(exact[row.Tool]))
		// A standard error of 1.6%: 5% is three of them.
		for name, v := range map[string]uint64{"sessions": row.Sessions, "runs": row.Runs} {
			if e := math.Abs(float64(v)-n) / n; e > 0.05 {
				t.Errorf("%s: %s %d, exactly %.0f: off by %.1f%%", row.Tool, name, v, n, 100*e)
			}
		}
		if row.Sessions <= 16 {
			t.Errorf("%s: %d sessions, within the sketch's exact small set: the test proves nothing", row.Tool, row.Sessions)
		}
	}
}
