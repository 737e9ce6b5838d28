package queries_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
)

// TestSeriesHandComputed checks series figures computed by hand from the
// fixture's generator (internal/testing/fixture).
func TestSeriesHandComputed(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	day := 24 * time.Hour

	t.Run("deploy_preview 1→2 by day", func(t *testing.T) {
		// Day d (d = 0..6) starts at Now-7d+d, 12:00: claude-desktop@0.9.1
		// sends 8-d calls from 15:00 and legacy-bot one at 16:00, all in
		// the calendar day that starts 12 h earlier. The window
		// [Now-7d, Now) starts and ends at noon: 8 daily buckets, the
		// first and the last cut by it; the last has none.
		f := a
		f.Tool = "deploy_preview"
		s, err := r.StaleUsageSeries(c, f, queries.SeriesOptions{Step: day, GroupBy: []string{"revision_client"}})
		if err != nil {
			t.Fatal(err)
		}
		if !s.From.Equal(a.From) || !s.To.Equal(a.To) || s.Step != day {
			t.Errorf("window %s to %s step %s, want %s to %s step 24h", s.From, s.To, s.Step, a.From, a.To)
		}
		var got []uint64
		var times []time.Time
		for _, p := range s.Points {
			if p.RevisionClient == "1" {
				got = append(got, p.StaleCalls)
				times = append(times, p.Time)
			}
		}
		if want := []uint64{9, 8, 7, 6, 5, 4, 3, 0}; !reflect.DeepEqual(got, want) {
			t.Errorf("stale calls per day = %v, want %v", got, want)
		}
		if len(times) > 0 && !times[0].Equal(a.From.Truncate(day)) {
			t.Errorf("first bucket %s, want %s", times[0], a.From.Truncate(day))
		}
	})

	t.Run("edge buckets exact", func(t *testing.T) {
		// Staging: 10 search_docs calls at Now-4h + i min (i = 0..9). The
		// window [08:02:30, 08:07:30) holds i = 3..7; 5-minute buckets
		// 08:00 (i = 3, 4) and 08:05 (i = 5, 6, 7), each cut by the window.
		f := queries.Filter{Tenant: fixture.TenantA, Environment: "staging",
			From: fixture.Now.Add(-4*time.Hour + 150*time.Second), To: fixture.Now.Add(-4*time.Hour + 450*time.Second)}
		s, err := r.StaleUsageSeries(c, f, queries.SeriesOptions{Step: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		start := fixture.Now.Add(-4 * time.Hour)
		want := []apiv1.StaleUsagePoint{
			{Time: start, Calls: 2, Current: 2},
			{Time: start.Add(5 * time.Minute), Calls: 3, Current: 3},
		}
		if !reflect.DeepEqual(s.Points, want) {
			t.Errorf("points = %+v, want %+v", s.Points, want)
		}
		rows, err := r.StaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Calls != 5 {
			t.Errorf("the report over the same window: %+v, want 5 calls", rows)
		}
	})

	t.Run("violations by kind", func(t *testing.T) {
		// mixed_revision: 2 calls at Now-4d (2099-03-12).
		s, err := r.ViolationsSeries(c, a, queries.SeriesOptions{Step: day, GroupBy: []string{"kind"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Points {
			want := uint64(0)
			if p.Time.Equal(fixture.Now.Add(-4 * day).Truncate(day)) {
				want = 2
			}
			if p.Kind == queries.ViolationMixedRevision && p.Violations != want {
				t.Errorf("mixed_revision at %s = %d, want %d", p.Time, p.Violations, want)
			}
		}
	})

	t.Run("zero-filled when nothing matches", func(t *testing.T) {
		f := a
		f.Tool = "no-such-tool"
		s, err := r.ToolsSeries(c, f, queries.SeriesOptions{Step: day})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Points) != 8 {
			t.Fatalf("%d points, want the 8 daily buckets: %+v", len(s.Points), s.Points)
		}
		for i, p := range s.Points {
			if want := a.From.Truncate(day).Add(time.Duration(i) * day); !p.Time.Equal(want) || p.Calls != 0 {
				t.Errorf("point %d = %+v, want 0 calls at %s", i, p, want)
			}
		}
	})
}

// TestSeriesSumsToReport checks that each series sums to its report's
// totals over the same window, for windows whose edges the minutely tier
// serves and windows it widens, with steps of each tier, and that every
// group has every bucket.
func TestSeriesSumsToReport(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	now := fixture.Now
	windows := []struct {
		name     string
		from, to time.Time
		step     time.Duration
	}{
		{"week by hour", now.Add(-7 * 24 * time.Hour), now, time.Hour},
		{"week by day", now.Add(-7 * 24 * time.Hour), now, 24 * time.Hour},
		{"ragged recent by 7 min", now.Add(-36*time.Hour + 17*time.Minute + 23*time.Second), now.Add(-5*time.Minute + 30*time.Second), 7 * time.Minute},
		{"ragged recent by 3 h", now.Add(-36*time.Hour + 17*time.Minute + 23*time.Second), now.Add(-5*time.Minute + 30*time.Second), 3 * time.Hour},
		{"ragged old by 2 h", now.Add(-6*24*time.Hour + 13*time.Minute), now.Add(-3*24*time.Hour + 47*time.Minute), 2 * time.Hour},
	}
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		for _, w := range windows {
			t.Run(tenant+"/"+w.name, func(t *testing.T) {
				f := queries.Filter{Tenant: tenant, From: w.from, To: w.to}
				checkSums(t, c, r, f, w.step)
				excl := f
				excl.ExcludeClients = []string{"ci-runner"}
				checkSums(t, c, r, excl, w.step)
			})
		}
	}
}

func checkSums(t *testing.T, c context.Context, r *queries.Runner, f queries.Filter, step time.Duration) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	opt := queries.SeriesOptions{Step: step}
	from, to := r.Window(f.From, f.To)
	complete := func(name string, sFrom, sTo time.Time, sStep time.Duration, times []time.Time, groups int) {
		t.Helper()
		if !sFrom.Equal(from) || !sTo.Equal(to) {
			t.Errorf("%s: window %s to %s, the reports read %s to %s", name, sFrom, sTo, from, to)
		}
		if sStep < step || sStep%time.Minute != 0 {
			t.Errorf("%s: step %s for %s asked", name, sStep, step)
		}
		n := 0
		first := time.Unix(0, from.UnixNano()-from.UnixNano()%int64(sStep)).UTC()
		for b := first; b.Before(to); b = b.Add(sStep) {
			n++
		}
		if len(times) != n*groups {
			t.Errorf("%s: %d points, want %d buckets × %d groups", name, len(times), n, groups)
		}
		for i, tm := range times {
			if want := first.Add(time.Duration(i%n) * sStep); n > 0 && !tm.Equal(want) {
				t.Errorf("%s: point %d at %s, want %s", name, i, tm, want)
				break
			}
		}
	}

	stale, err := r.StaleUsageSeries(c, f, opt)
	must(err)
	staleRows, err := r.StaleUsage(c, f)
	must(err)
	var got, want [7]uint64
	var times []time.Time
	for _, p := range stale.Points {
		got = [7]uint64{got[0] + p.Calls, got[1] + p.StaleCalls, got[2] + p.Current, got[3] + p.Normalized, got[4] + p.Rejected, got[5] + p.Removed, got[6] + p.Failed}
		times = append(times, p.Time)
	}
	for _, row := range staleRows {
		stale := uint64(0)
		if row.Stale != nil && *row.Stale {
			stale = row.Calls
		}
		want = [7]uint64{want[0] + row.Calls, want[1] + stale, want[2] + row.Current, want[3] + row.Normalized, want[4] + row.Rejected, want[5] + row.Removed, want[6] + row.Failed}
	}
	complete("stale usage", stale.From, stale.To, stale.Step, times, 1)
	if got != want {
		t.Errorf("stale usage series sums %v, the report %v", got, want)
	}

	// By tool: every tool's buckets, and the same sums.
	byTool, err := r.ToolsSeries(c, f, queries.SeriesOptions{Step: step, GroupBy: []string{"tool"}})
	must(err)
	tools, err := r.Tools(c, f)
	must(err)
	sums := map[string]uint64{}
	times = times[:0]
	for _, p := range byTool.Points {
		sums[p.Tool] += p.Calls
		times = append(times, p.Time)
	}
	wantSums := map[string]uint64{}
	for _, row := range tools {
		wantSums[row.Tool] = row.Calls
	}
	complete("tools by tool", byTool.From, byTool.To, byTool.Step, times, len(tools))
	if !reflect.DeepEqual(sums, wantSums) && len(tools) > 0 {
		t.Errorf("tools series sums %v, the report %v", sums, wantSums)
	}

	rej, err := r.RejectionsSeries(c, f, opt)
	must(err)
	rejRows, err := r.Rejections(c, f)
	must(err)
	var g2, w2 [2]uint64
	for _, p := range rej.Points {
		g2 = [2]uint64{g2[0] + p.Rejected, g2[1] + p.SideEffectViolations}
	}
	for _, row := range rejRows {
		w2 = [2]uint64{w2[0] + row.Rejected, w2[1] + row.SideEffectViolations}
	}
	if g2 != w2 {
		t.Errorf("rejections series sums %v, the report %v", g2, w2)
	}

	rep, err := r.RepairsSeries(c, f, opt)
	must(err)
	repRows, err := r.Repairs(c, f)
	must(err)
	var g3, w3 [11]uint64
	for _, p := range rep.Points {
		for i, v := range []uint64{p.StaleRejections, p.Rejections, p.RetryCalls, p.RefreshRetries, p.ModelRepairs, p.HumanApprovals, p.HumanApprovalsDenied, p.Abandons, p.AutomaticRepairs, p.AutomaticSucceeded, p.AutomaticFailed} {
			g3[i] += v
		}
	}
	for _, p := range repRows {
		for i, v := range []uint64{p.StaleRejections, p.Rejections, p.RetryCalls, p.RefreshRetries, p.ModelRepairs, p.HumanApprovals, p.HumanApprovalsDenied, p.Abandons, p.AutomaticRepairs, p.AutomaticSucceeded, p.AutomaticFailed} {
			w3[i] += v
		}
	}
	if g3 != w3 {
		t.Errorf("repairs series sums %v, the report %v", g3, w3)
	}

	ad, err := r.AdapterRetirementSeries(c, f, queries.SeriesOptions{Step: step, GroupBy: []string{"adapter"}})
	must(err)
	adRows, err := r.AdapterRetirement(c, f, retire)
	must(err)
	adGot, adWant := map[string][2]uint64{}, map[string][2]uint64{}
	for _, p := range ad.Points {
		v := adGot[p.Adapter]
		adGot[p.Adapter] = [2]uint64{v[0] + p.Calls, v[1] + p.WouldBeRejected}
	}
	for _, row := range adRows {
		if row.Calls > 0 {
			adWant[row.AdapterID] = [2]uint64{row.Calls, row.WouldBeRejected}
		}
	}
	if !reflect.DeepEqual(adGot, adWant) && (len(adGot) > 0 || len(adWant) > 0) {
		t.Errorf("adapter series sums %v, the report %v", adGot, adWant)
	}

	prop, err := r.PropagationSeries(c, f, opt)
	must(err)
	propRows, err := r.Propagation(c, f)
	must(err)
	var g4, w4 [6]uint64
	for _, p := range prop.Points {
		for i, v := range []uint64{p.NotifiedSessions, p.RefreshedSessions, p.NeverRefreshed, p.StaleCallsAfterNotice, p.StaleCallsAfterRefresh, p.SessionsWithStaleCalls} {
			g4[i] += v
		}
	}
	for _, p := range propRows {
		for i, v := range []uint64{p.NotifiedSessions, p.RefreshedSessions, p.NeverRefreshed, p.StaleCallsAfterNotice, p.StaleCallsAfterRefresh, p.SessionsWithStaleCalls} {
			w4[i] += v
		}
	}
	if g4 != w4 {
		t.Errorf("propagation series sums %v, the report %v", g4, w4)
	}

	// The audit holds every call: its series counts the stale-usage
	// report's calls, and its stale calls those of the stale rows.
	audit, err := r.AuditSeries(c, queries.AuditFilter{Filter: f}, opt)
	must(err)
	var g5 [2]uint64
	for _, p := range audit.Points {
		g5 = [2]uint64{g5[0] + p.Calls, g5[1] + p.StaleCalls}
	}
	if g5 != [2]uint64{want[0], want[1]} {
		t.Errorf("audit series sums %v calls and stale calls, the stale-usage report %v", g5, want[:2])
	}

	// Revision sources by client: every client's buckets, each source's
	// sums.
	src, err := r.RevisionSourcesSeries(c, f, queries.SeriesOptions{Step: step, GroupBy: []string{"client"}})
	must(err)
	srcRows, err := r.RevisionSources(c, f)
	must(err)
	srcGot, srcWant := map[string][5]uint64{}, map[string][5]uint64{}
	times = times[:0]
	for _, p := range src.Points {
		v := srcGot[p.Client]
		srcGot[p.Client] = [5]uint64{v[0] + p.Calls, v[1] + p.Declared, v[2] + p.Listed, v[3] + p.Inferred, v[4] + p.Unknown}
		times = append(times, p.Time)
		if (p.UnknownShare == nil) != (p.Calls == 0) || (p.UnknownShare != nil && *p.UnknownShare != float64(p.Unknown)/float64(p.Calls)) {
			t.Errorf("revision sources point %s: unknown share %s of %d unknown in %d calls", js(p.Time), js(p.UnknownShare), p.Unknown, p.Calls)
		}
	}
	for _, row := range srcRows {
		v := srcWant[row.Client]
		srcWant[row.Client] = [5]uint64{v[0] + row.Calls, v[1] + row.Declared, v[2] + row.Listed, v[3] + row.Inferred, v[4] + row.Unknown}
	}
	// Without a row, the series is one group of zeros.
	complete("revision sources by client", src.From, src.To, src.Step, times, max(1, len(srcWant)))
	if !reflect.DeepEqual(srcGot, srcWant) && len(srcWant) > 0 {
		t.Errorf("revision sources series sums %v, the report %v", srcGot, srcWant)
	}

	ce, err := r.ContractErrorsSeries(c, f, queries.SeriesOptions{Step: step, GroupBy: []string{"client"}})
	must(err)
	ceRows, err := r.ContractErrors(c, f)
	must(err)
	ceGot, ceWant := map[string][3]uint64{}, map[string][3]uint64{}
	times = times[:0]
	for _, p := range ce.Points {
		v := ceGot[p.Client]
		ceGot[p.Client] = [3]uint64{v[0] + p.ContractErrors, v[1] + p.Refreshes, v[2] + p.FailedRefreshes}
		times = append(times, p.Time)
		if (p.RefreshFailureRate == nil) != (p.Refreshes == 0) {
			t.Errorf("contract errors point %s: failure rate %s with %d refreshes", js(p.Time), js(p.RefreshFailureRate), p.Refreshes)
		}
	}
	for _, row := range ceRows {
		ceWant[row.Client] = [3]uint64{row.ContractErrors, row.Refreshes, row.FailedRefreshes}
	}
	complete("contract errors by client", ce.From, ce.To, ce.Step, times, max(1, len(ceWant)))
	if !reflect.DeepEqual(ceGot, ceWant) && len(ceWant) > 0 {
		t.Errorf("contract errors series sums %v, the report %v", ceGot, ceWant)
	}

	// By tool: the contract errors in their tool's group, every refresh in
	// the group without a tool.
	ceTool, err := r.ContractErrorsSeries(c, f, queries.SeriesOptions{Step: step, GroupBy: []string{"tool"}})
	must(err)
	toolGot, toolWant := map[string][2]uint64{}, map[string][2]uint64{}
	for _, p := range ceTool.Points {
		v := toolGot[p.Tool]
		toolGot[p.Tool] = [2]uint64{v[0] + p.ContractErrors, v[1] + p.Refreshes}
	}
	for _, row := range ceRows {
		for _, fd := range row.Fields {
			v := toolWant[fd.Tool]
			toolWant[fd.Tool] = [2]uint64{v[0] + fd.ContractErrors, v[1]}
		}
		v := toolWant[""]
		toolWant[""] = [2]uint64{v[0], v[1] + row.Refreshes}
	}
	for k, v := range toolGot {
		if v == [2]uint64{} {
			delete(toolGot, k)
		}
	}
	for k, v := range toolWant {
		if v == [2]uint64{} {
			delete(toolWant, k)
		}
	}
	if !reflect.DeepEqual(toolGot, toolWant) {
		t.Errorf("contract errors series by tool sums %v, the report %v", toolGot, toolWant)
	}

	vio, err := r.ViolationsSeries(c, f, opt)
	must(err)
	page, err := r.Violations(c, f, queries.Page{Limit: queries.MaxPageLimit})
	must(err)
	var n uint64
	for _, p := range vio.Points {
		n += p.Violations
	}
	if n != uint64(len(page.Rows)) || page.Next != "" {
		t.Errorf("violations series sums %d, the report lists %d", n, len(page.Rows))
	}
}

func TestSeriesInvalid(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	for _, tc := range []struct {
		name string
		opt  queries.SeriesOptions
	}{
		{"negative step", queries.SeriesOptions{Step: -time.Hour}},
		{"too many buckets", queries.SeriesOptions{Step: time.Second, GroupBy: nil}},
		{"unknown dimension", queries.SeriesOptions{Step: time.Hour, GroupBy: []string{"kind"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := a
			if tc.name == "too many buckets" {
				// Ten days ahead, by the minute.
				f.From, f.To = fixture.Now.Add(-time.Hour), fixture.Now.Add(10*24*time.Hour)
			}
			_, err := r.StaleUsageSeries(c, f, tc.opt)
			if !errors.Is(err, queries.ErrInvalidFilter) {
				t.Errorf("err = %v, want ErrInvalidFilter", err)
			}
		})
	}
	// The step is rounded up to the tiers' resolution: whole hours for a
	// window that starts before the minutely tier's days.
	s, err := r.StaleUsageSeries(c, a, queries.SeriesOptions{Step: 90 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s.Step != 2*time.Hour {
		t.Errorf("step %s, want 2h", s.Step)
	}
	// No step: the week in about 100 buckets, 1.68 h rounded up to 2 h.
	if s, err = r.StaleUsageSeries(c, a, queries.SeriesOptions{}); err != nil || s.Step != 2*time.Hour {
		t.Errorf("default step %s (%v), want 2h", s.Step, err)
	}
}
