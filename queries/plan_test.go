package queries

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/store/schema"
)

func TestPlanExamples(t *testing.T) {
	now := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	format := func(all [3][]Span) [3][]string {
		var got [3][]string
		for tier, spans := range all {
			for _, s := range spans {
				got[tier] = append(got[tier], s.From.Format("01-02 15:04")+"→"+s.To.Format("01-02 15:04"))
			}
		}
		return got
	}
	f := func(from, to string, want, wantPrevious [3][]string, wantFrom, wantTo, wantPreviousFrom string) {
		t.Helper()
		p := planWindow(at(from), at(to), now, 30)
		got, gotPrevious := format(p.Spans), format(p.Previous)
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotPrevious) != fmt.Sprint(wantPrevious) ||
			p.From != at(wantFrom) || p.To != at(wantTo) || p.PreviousFrom != at(wantPreviousFrom) {
			t.Errorf("plan(%s, %s) = %v..%v %v previous from %v %v, want %s..%s %v previous from %s %v",
				from, to, p.From, p.To, got, p.PreviousFrom, gotPrevious, wantFrom, wantTo, want, wantPreviousFrom, wantPrevious)
		}
	}
	// A week ending now: whole days in the middle, hours at the edges; the
	// week before it the same way.
	f("2099-03-09 12:00:00", "2099-03-16 12:00:00", [3][]string{
		nil,
		{"03-09 12:00→03-10 00:00", "03-16 00:00→03-16 12:00"},
		{"03-10 00:00→03-16 00:00"},
	}, [3][]string{
		nil,
		{"03-02 12:00→03-03 00:00", "03-09 00:00→03-09 12:00"},
		{"03-03 00:00→03-09 00:00"},
	}, "2099-03-09 12:00:00", "2099-03-16 12:00:00", "2099-03-02 12:00:00")
	f("2099-03-09 06:00:00", "2099-03-16 06:00:00", [3][]string{
		nil,
		{"03-09 06:00→03-10 00:00", "03-16 00:00→03-16 06:00"},
		{"03-10 00:00→03-16 00:00"},
	}, [3][]string{
		nil,
		{"03-02 06:00→03-03 00:00", "03-09 00:00→03-09 06:00"},
		{"03-03 00:00→03-09 00:00"},
	}, "2099-03-09 06:00:00", "2099-03-16 06:00:00", "2099-03-02 06:00:00")
	// A ragged recent window: the minutes around it, read exactly (the
	// window stays as asked); the previous 1h24m40s too, its last minute
	// shared with the window's first.
	f("2099-03-16 10:17:30", "2099-03-16 11:42:10", [3][]string{
		{"03-16 10:17→03-16 11:43"},
		nil,
		nil,
	}, [3][]string{
		{"03-16 08:52→03-16 09:00", "03-16 10:00→03-16 10:18"},
		{"03-16 09:00→03-16 10:00"},
		nil,
	}, "2099-03-16 10:17:30", "2099-03-16 11:42:10", "2099-03-16 08:52:50")
	// A ragged window older than the minutely tier: widened to the hour,
	// and the six hours before it.
	f("2099-03-10 10:17:00", "2099-03-10 15:42:00", [3][]string{
		nil,
		{"03-10 10:00→03-10 16:00"},
		nil,
	}, [3][]string{
		nil,
		{"03-10 04:00→03-10 10:00"},
		nil,
	}, "2099-03-10 10:00:00", "2099-03-10 16:00:00", "2099-03-10 04:00:00")
	// An empty window.
	f("2099-03-16 10:00:00", "2099-03-16 10:00:00", [3][]string{}, [3][]string{}, "2099-03-16 10:00:00", "2099-03-16 10:00:00", "2099-03-16 10:00:00")
}

// TestPlanCovers checks, over random windows, that Spans cover the resolved
// window and Previous the equal period before it exactly once, and that
// every span is aligned to its tier and lies where its tier is still kept.
func TestPlanCovers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	now := time.Date(2099, 3, 16, 12, 34, 56, 0, time.UTC)
	for _, retention := range []int{1, 2, 30, 400} {
		minuteFloor := now.Add(-time.Duration(min(schema.MinuteTierDays, retention)) * 24 * time.Hour)
		hourFloor := now.Add(-time.Duration(min(schema.HourTierDays, retention)) * 24 * time.Hour)
		for i := 0; i < 5000; i++ {
			from := now.Add(-time.Duration(rng.Int63n(int64(time.Duration(retention+2) * 24 * time.Hour))))
			to := from.Add(time.Duration(rng.Int63n(int64(40 * 24 * time.Hour))))
			p := planWindow(from, to, now, retention)
			if p.From.After(from) || p.To.Before(to) && p.From.Before(p.To) {
				t.Fatalf("plan %v..%v does not contain %v..%v", p.From, p.To, from, to)
			}
			// An edge is exact, or widened to a whole hour (one the
			// minutely tier no longer serves).
			if p.From.Before(p.To) {
				if !p.From.Equal(from) && (!p.From.Equal(p.BucketsFrom) || !p.From.Truncate(time.Hour).Equal(p.From)) {
					t.Fatalf("plan from %v for %v: neither exact nor a whole hour", p.From, from)
				}
				if !p.To.Equal(to) && (!p.To.Equal(p.BucketsTo) || !p.To.Truncate(time.Hour).Equal(p.To)) {
					t.Fatalf("plan to %v for %v: neither exact nor a whole hour", p.To, to)
				}
			}
			if p.BucketsFrom.After(p.From) || p.BucketsTo.Before(p.To) {
				t.Fatalf("buckets %v..%v do not contain the window %v..%v", p.BucketsFrom, p.BucketsTo, p.From, p.To)
			}
			checkCover(t, p.Spans, p.BucketsFrom, p.BucketsTo, from, to, minuteFloor, hourFloor, retention)
			if p.From.Before(p.To) {
				prev := p.From.Add(-p.To.Sub(p.From))
				if p.PreviousFrom.After(prev) || !p.PreviousFrom.Equal(prev) && !p.PreviousFrom.Truncate(time.Hour).Equal(p.PreviousFrom) {
					t.Fatalf("previous from %v for %v..%v: neither %v nor a whole hour before it", p.PreviousFrom, p.From, p.To, prev)
				}
				checkCover(t, p.Previous, p.PreviousFrom.Truncate(time.Minute), ceil(p.From, time.Minute), from, to, minuteFloor, hourFloor, retention)
			}
		}
	}
}

// checkCover checks that spans cover [lo, hi) exactly once, each span
// aligned to its tier and where its tier is still kept.
func checkCover(t *testing.T, spans [3][]Span, lo, hi, from, to, minuteFloor, hourFloor time.Time, retention int) {
	t.Helper()
	type piece struct {
		Span
		tier Tier
	}
	var all []piece
	for tier, spans := range spans {
		for _, s := range spans {
			all = append(all, piece{s, Tier(tier)})
		}
	}
	slots := spanSlots
	for tier, spans := range spans {
		if len(spans) > slots {
			t.Fatalf("window %v..%v: %d %v ranges, the queries bind %d: %v", from, to, len(spans), Tier(tier), slots, spans)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].From.Before(all[j].From) })
	cur := lo
	for _, s := range all {
		step := s.tier.step()
		switch {
		case !s.From.Equal(cur):
			t.Fatalf("window %v..%v: gap or overlap at %v (%v)", from, to, cur, all)
		case !s.From.Before(s.To):
			t.Fatalf("empty span %v", s)
		case !s.From.Truncate(step).Equal(s.From) || !s.To.Truncate(step).Equal(s.To):
			t.Fatalf("span %v not aligned to %v", s, s.tier)
		case s.tier == TierMinute && s.From.Before(minuteFloor):
			t.Fatalf("span %v reads trimmed minutes (retention %d)", s, retention)
		case s.tier == TierHour && s.From.Before(hourFloor):
			t.Fatalf("span %v reads trimmed hours (retention %d)", s, retention)
		}
		cur = s.To
	}
	if !cur.Equal(hi) {
		t.Fatalf("window %v..%v: spans end at %v, not %v", from, to, cur, hi)
	}
}

// TestRollupsFor checks which filters the coarse rollups may answer: none
// that names a client, since usage_* has no client columns.
func TestRollupsFor(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		want Rollups
	}{
		{Filter{Tenant: "a"}, RollupsCoarse},
		{Filter{Tenant: "a", Tool: "t", Service: "s", Environment: "prod"}, RollupsCoarse},
		{Filter{Tenant: "a", ExcludeClients: []string{}}, RollupsCoarse},
		{Filter{Tenant: "a", Client: "cursor"}, RollupsFine},
		{Filter{Tenant: "a", Client: "cursor@0.48.0"}, RollupsFine},
		{Filter{Tenant: "a", ExcludeClients: []string{"ci-runner"}}, RollupsFine},
	} {
		if got := RollupsFor(tc.f); got != tc.want {
			t.Errorf("RollupsFor(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
}

// TestRangesBoundAndRendered checks, over random windows, that a plan binds
// the bounds of each of its ranges, and that the query rendered for the
// call names every one of them and no other: a range bound but not in the
// text would leave part of the window out.
func TestRangesBoundAndRendered(t *testing.T) {
	r, err := New(nil, "mcpdrift")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := r.templates["stale_usage"]
	rng := rand.New(rand.NewSource(2))
	now := time.Date(2099, 3, 16, 12, 34, 56, 0, time.UTC)
	seen := map[ranges]bool{}
	for range 2000 {
		from := now.Add(-time.Duration(rng.Int63n(int64(32 * 24 * time.Hour))))
		to := from.Add(time.Duration(rng.Int63n(int64(20 * 24 * time.Hour))))
		p := planWindow(from, to, now, 30)
		c := p.bind(Filter{Tenant: "a", From: from, To: to})
		params, got := c.params, c.ranges
		if seen[got] {
			continue
		}
		seen[got] = true
		sql, err := render(tmpl, "mcpdrift", true, shape{}, got)
		if err != nil {
			t.Fatal(err)
		}
		for name := range params {
			prefix, _, ok := strings.Cut(name, "_from_")
			if !ok {
				prefix, _, ok = strings.Cut(name, "_to_")
			}
			if ok && slices.Contains(rangePrefixes[:], prefix) && !strings.Contains(sql, "{"+name+":DateTime('UTC')}") &&
				!strings.Contains(sql, "{"+name+":DateTime64(9, 'UTC')}") {
				t.Fatalf("window %v..%v: %s is bound but not in the query", from, to, name)
			}
		}
		for i, prefix := range rangePrefixes {
			if next := fmt.Sprintf("{%s_from_%d:", prefix, got[i]); strings.Contains(sql, next) {
				t.Fatalf("window %v..%v: the query names %s, which is not bound", from, to, next)
			}
		}
	}
	if len(seen) < 10 {
		t.Errorf("only %d kinds of plan seen: %v", len(seen), seen)
	}
}
