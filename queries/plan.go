package queries

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Tier is a rollup granularity.
type Tier int

// Rollup tiers, finest first.
const (
	TierMinute Tier = iota // recent_calls (aggregated when read), repairs_1m
	TierHour               // calls_1h, repairs_1h
	TierDay                // calls_1d, repairs_1d
)

func (t Tier) String() string { return [...]string{"minute", "hour", "day"}[t] }

func (t Tier) step() time.Duration {
	return [...]time.Duration{time.Minute, time.Hour, 24 * time.Hour}[t]
}

// Span is a half-open interval [From, To) of bucket start times.
type Span struct{ From, To time.Time }

// Plan says which rollup buckets a window is read from.
//
// The window is covered by whole buckets, [BucketsFrom, BucketsTo), each
// part read from the coarsest tier whose buckets fit inside it: whole days
// from the daily tier, the hours left at either edge from the hourly tier,
// the minutes left from the minutely tier. A tier is used only where its TTL
// cannot have trimmed it yet (the minutely tier keeps schema.MinuteTierDays,
// the hourly schema.HourTierDays, or the retention if shorter; with a margin
// of an hour). The minutely tier holds every call with its time
// (recent_calls), so an edge it serves is read exactly: From and To are the
// window as asked. An edge older than that is widened to the hour, or to the
// day, and From or To says so. Either way every bucket read is whole and
// present, and the answer equals the raw table's over [From, To), the
// window a report states it read.
//
// Previous is the equal period before the window, [PreviousFrom, From),
// resolved the same way, that trends compare the window with. A report
// reads its totals from Spans and only its calls of the previous period
// from Previous.
type Plan struct {
	From, To time.Time
	// BucketsFrom and BucketsTo are the whole buckets' bounds: From and To
	// outwards to the edge tiers' buckets.
	BucketsFrom, BucketsTo time.Time
	// Spans lists the bucket ranges of each tier, indexed by Tier.
	Spans [3][]Span
	// PreviousFrom is the start of the previous period: From less the
	// window's length, exact or widened as an edge is.
	PreviousFrom time.Time
	// Previous lists the bucket ranges of each tier that cover the
	// previous period; its last minutes may share a bucket with the
	// window's first, which the minutely tier tells apart by time.
	Previous [3][]Span
}

// Window is the window every report over [from, to) reads, and states in
// its answer: [from, to) itself while the minutely tier holds both edges
// (schema.MinuteTierDays), an edge older than that widened outwards to the
// hour or the day (see Plan). Reports resolve their filter's window with
// it, so that all of them count the same events.
func (r *Runner) Window(from, to time.Time) (time.Time, time.Time) {
	p := r.Plan(from, to)
	return p.From, p.To
}

// resolve is f over the window the reports read (Window).
func (r *Runner) resolve(f Filter) Filter {
	f.From, f.To = r.Window(f.From, f.To)
	return f
}

// Plan resolves the window [from, to) against the rollup tiers.
func (r *Runner) Plan(from, to time.Time) Plan {
	return planWindow(from.UTC(), to.UTC(), r.now().UTC(), r.retentionDays)
}

func planWindow(from, to, now time.Time, retentionDays int) Plan {
	minuteFloor, hourFloor := floors(now, retentionDays)
	finest := func(t time.Time) Tier { return finestAt(t, minuteFloor, hourFloor) }
	var p Plan
	fromTier, toTier := finest(from), finest(to)
	p.BucketsFrom = from.Truncate(fromTier.step())
	p.BucketsTo = ceil(to, toTier.step())
	p.From, p.To = p.BucketsFrom, p.BucketsTo
	if fromTier == TierMinute {
		p.From = from
	}
	if toTier == TierMinute {
		p.To = to
	}
	if !p.From.Before(p.To) {
		p.To, p.PreviousFrom = p.From, p.From
		p.BucketsTo = p.BucketsFrom
		return p
	}
	decompose(&p.Spans, p.BucketsFrom, p.BucketsTo, TierDay)
	prev := p.From.Add(-p.To.Sub(p.From))
	prevTier := finest(prev)
	prevBuckets := prev.Truncate(prevTier.step())
	p.PreviousFrom = prevBuckets
	if prevTier == TierMinute {
		p.PreviousFrom = prev
	}
	decompose(&p.Previous, prevBuckets, ceil(p.From, fromTier.step()), TierDay)
	return p
}

// floors are the oldest times the minutely and the hourly tiers still
// hold, with a margin of an hour: the tiers' TTL, capped by the retention.
func floors(now time.Time, retentionDays int) (minuteFloor, hourFloor time.Time) {
	minuteDays := min(schema.MinuteTierDays, retentionDays)
	hourDays := min(schema.HourTierDays, retentionDays)
	minuteFloor = now.Add(-time.Duration(minuteDays)*24*time.Hour + time.Hour)
	hourFloor = now.Add(-time.Duration(hourDays)*24*time.Hour + time.Hour)
	return minuteFloor, hourFloor
}

// finestAt returns the finest tier that can serve an edge at t: the
// buckets between t and the enclosing day's edge, of every tier finer than
// a day, must still be kept.
func finestAt(t, minuteFloor, hourFloor time.Time) Tier {
	hoursKept := !t.Truncate(24 * time.Hour).Before(hourFloor)
	switch {
	case hoursKept && !t.Truncate(time.Hour).Before(minuteFloor):
		return TierMinute
	case hoursKept:
		return TierHour
	}
	return TierDay
}

// decompose covers [a, b) with whole buckets, coarsest first, appended to
// spans.
func decompose(spans *[3][]Span, a, b time.Time, t Tier) {
	if !a.Before(b) {
		return
	}
	for ; t >= TierMinute; t-- {
		lo, hi := ceil(a, t.step()), b.Truncate(t.step())
		if lo.Before(hi) {
			spans[t] = append(spans[t], Span{lo, hi})
			if t > TierMinute {
				decompose(spans, a, lo, t-1)
				decompose(spans, hi, b, t-1)
			}
			return
		}
	}
}

func ceil(t time.Time, d time.Duration) time.Time {
	f := t.Truncate(d)
	if f.Equal(t) {
		return f
	}
	return f.Add(d)
}

// Rollups is a family of rollup tables a report can read.
type Rollups int

// Rollup families.
const (
	// RollupsCoarse are the report-shaped rollups (usage_*, rejected_*,
	// adapted_*): few rows, but usage_* has no client columns.
	RollupsCoarse Rollups = iota
	// RollupsFine are calls_* and repairs_*, with every dimension.
	RollupsFine
)

func (r Rollups) String() string { return [...]string{"coarse", "fine"}[r] }

// FineSuffix names the rendering of a query for RollupsFine (see New).
const FineSuffix = "@fine"

// RollupsFor returns the rollups that answer f exactly: the coarse ones
// unless f names a client or excludes some, which only tables with the
// client columns can filter on. Both give the same answer where both can;
// the coarse ones read fewer rows.
func RollupsFor(f Filter) Rollups {
	if f.Client != "" || len(f.ExcludeClients) > 0 {
		return RollupsFine
	}
	return RollupsCoarse
}

// runPlanned runs the rollup-served report query over f's resolved window,
// rendered for the rollups that can answer f (RollupsFor).
func (r *Runner) runPlanned(ctx context.Context, query string, f Filter, dest any) error {
	if RollupsFor(f) == RollupsFine {
		if _, ok := r.templates[query+FineSuffix]; ok {
			query += FineSuffix
		}
	}
	return r.run(ctx, query, r.Plan(f.From, f.To).bind(f), dest)
}

const bucketLayout = "2006-01-02 15:04:05"

// A tier's buckets in Spans, and in Previous, form at most spanSlots ranges
// (the whole days, or the hours or minutes at either edge of what a coarser
// tier serves), so that a report has few renderings (TestPlanCovers checks
// the bound).
const spanSlots = 2

// rangePrefixes name the tiers' ranges in the parameters: Spans' minute,
// hour and day ranges, then Previous'.
var rangePrefixes = [6]string{"m", "h", "d", "pm", "ph", "pd"}

// ranges counts the ranges of each tier a call binds, in the order of
// rangePrefixes: the queries' text holds one condition per range (inSpans).
type ranges [6]uint8

// allRanges is the most ranges a plan binds: what Query renders.
var allRanges = ranges{spanSlots, spanSlots, spanSlots, spanSlots, spanSlots, spanSlots}

// bind binds f with the plan's resolved window and tier spans: from, to and
// previous_from, and for each tier p (m, h, d) the bounds of its ranges in
// Spans as {p_from_i} and {p_to_i}, and in Previous as {pp_from_i} and
// {pp_to_i} (pm_from_0, ph_from_0, ...); the call is rendered for f's
// shape and for those ranges.
func (p Plan) bind(f Filter) call {
	params := f.paramsWindow(p.From, p.To)
	params.Time("previous_from", p.PreviousFrom)
	bindSpans(params, rangePrefixes[:3], &p.Spans)
	bindSpans(params, rangePrefixes[3:], &p.Previous)
	c := call{params: params, shape: f.shape()}
	for i, spans := range [6][]Span{p.Spans[0], p.Spans[1], p.Spans[2], p.Previous[0], p.Previous[1], p.Previous[2]} {
		c.ranges[i] = uint8(len(spans))
	}
	return c
}

func bindSpans(params store.Params, prefixes []string, all *[3][]Span) {
	for t, prefix := range prefixes {
		for i, s := range all[t] {
			params[prefix+"_from_"+strconv.Itoa(i)] = s.From.Format(bucketLayout)
			params[prefix+"_to_"+strconv.Itoa(i)] = s.To.Format(bucketLayout)
		}
	}
}

// inSpans is the condition, in a query's text, that column lies in one of
// the ranges bound under prefix (m, h, d, or pm, ph, pd for Previous), r
// counting them: {{spans "hour" "h" .R}} in a template. Plain range
// comparisons, which the engine analyses and plans in a fraction of the
// time of a lambda over arrays of bounds, and which the primary key prunes
// on; false when the plan reads nothing from the tier.
//
// The bounds are bound in the column's type: DateTime for the rollups'
// bucket columns, DateTime64(9) for the time of a call (recent_calls).
// Compared with a DateTime bound, a DateTime64(9) column is not read
// exactly: ClickHouse 26.7 skips a part whose calls all lie in the half
// second before the bound (calls at 12:34:59.6 are not found before
// 12:35:00), so a report asked in that half second missed them
// (TestWindowEdges).
func inSpans(column, prefix string, r ranges) (string, error) {
	i := slices.Index(rangePrefixes[:], prefix)
	if i < 0 {
		return "", fmt.Errorf("no tier ranges bound under %q", prefix)
	}
	if r[i] == 0 {
		return "false", nil
	}
	typ := "DateTime('UTC')"
	if column == "time" {
		typ = "DateTime64(9, 'UTC')"
	}
	var b strings.Builder
	b.WriteString("(")
	for j := range int(r[i]) {
		if j > 0 {
			b.WriteString(" OR ")
		}
		fmt.Fprintf(&b, "%[1]s >= {%[2]s_from_%[3]d:%[4]s} AND %[1]s < {%[2]s_to_%[3]d:%[4]s}", column, prefix, j, typ)
	}
	b.WriteString(")")
	return b.String(), nil
}
