package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// maxTimedBuckets bounds the buckets of a series bucketed from rows that
// carry their time (the audit's stale calls' other counts, which its
// series endpoint does not split).
const maxTimedBuckets = 1000

// seriesBody is the envelope of the API's series endpoints: the window the
// report read, the step its buckets have, and one point per bucket and
// group, each a JSON object of the dimensions grouped by and the counts.
type seriesBody struct {
	From        time.Time                    `json:"from"`
	To          time.Time                    `json:"to"`
	StepSeconds int64                        `json:"step_seconds"`
	Rows        []map[string]json.RawMessage `json:"rows"`
}

// step is the bucket length a panel asks the API for: Grafana's interval,
// widened so that the range holds at most MaxDataPoints buckets, at least
// a minute (the API rounds it up further to what the rollups hold).
func step(from, to time.Time, dq backend.DataQuery) time.Duration {
	st := max(dq.Interval, time.Minute)
	if n := time.Duration(dq.MaxDataPoints); n > 0 && to.Sub(from)/st > n {
		st = (to.Sub(from) + n - 1) / n
	}
	return st
}

// bucketOf is the start of the bucket of step that holds t: a multiple of
// step since the Unix epoch, as the API aligns them.
func bucketOf(t time.Time, step time.Duration) time.Time {
	return time.Unix(0, t.UnixNano()-t.UnixNano()%int64(step)).UTC()
}

// starts lists the buckets' starts over [from, to).
func starts(from, to time.Time, step time.Duration) []time.Time {
	var out []time.Time
	for b := bucketOf(from, step); b.Before(to); b = b.Add(step) {
		out = append(out, b)
	}
	return out
}

// seriesQuery answers a timeseries query: the chosen counts of a report
// per bucket of the range, one series per combination of the grouping
// dimensions, as a wide time series frame. A report with a series endpoint
// is read with one request, its buckets computed by the API; the audit's
// stale calls' counts other than the calls themselves are read once (page
// by page) and bucketed here.
func (rn *runner) seriesQuery(ctx context.Context, q Query, dq backend.DataQuery) (*data.Frame, error) {
	rep := reports[q.Report]
	from, to := dq.TimeRange.From.UTC(), dq.TimeRange.To.UTC()
	if !from.Before(to) {
		return nil, fmt.Errorf("%w: the time range is empty", ErrInvalidQuery)
	}
	metrics := metricsOf(rep, q)
	var (
		bucketStarts []time.Time
		st           time.Duration
		per          [][]sample
		executed     string
	)
	// Of the audit's stale calls, the series counts the calls alone
	// (stale_calls).
	staleCalls := q.Report == QueryTypeAudit && q.StaleOnly
	if staleCalls {
		for _, m := range metrics {
			if m.Name != "calls" && m.Name != "stale_calls" {
				staleCalls = false
				break
			}
		}
	}
	if path := rep.seriesPath(); path != "" && (!q.StaleOnly || staleCalls) {
		v := q.filterParams(from, to)
		if q.Report == QueryTypeAudit {
			q.auditParams(v)
		}
		v.Set(apiv1.ParamStep, strconv.FormatInt(int64(step(from, to, dq)/time.Second), 10))
		// The filters the series endpoint has no parameter for are
		// dimensions: the points are grouped by them too and kept here.
		keep := map[string]string{}
		if q.Report == QueryTypeViolations && q.Kind != "" {
			keep["kind"] = q.Kind
		}
		if q.Report == QueryTypeAdapterRetirement && q.Adapter != "" {
			keep["adapter"] = q.Adapter
		}
		groupBy := slices.Clone(q.GroupBy)
		for _, g := range slices.Sorted(maps.Keys(keep)) {
			if !slices.Contains(groupBy, g) {
				groupBy = append(groupBy, g)
			}
		}
		for _, g := range groupBy {
			v.Add(apiv1.ParamGroupBy, g)
		}
		executed = "GET " + path + "?" + v.Encode()
		var b seriesBody
		if err := rn.c.get(ctx, path, v, &b); err != nil {
			return nil, err
		}
		if b.StepSeconds <= 0 {
			return nil, fmt.Errorf("the %s series answered a step of %d s", q.Report, b.StepSeconds)
		}
		st = time.Duration(b.StepSeconds) * time.Second
		bucketStarts = starts(b.From, b.To, st)
		per = make([][]sample, len(bucketStarts))
		for _, row := range b.Rows {
			names := metrics
			if staleCalls {
				names = []MetricInfo{}
				for range metrics {
					names = append(names, MetricInfo{Name: "stale_calls"})
				}
			}
			s, err := pointSample(row, q.GroupBy, names)
			if err != nil {
				return nil, fmt.Errorf("cannot read a point of the %s series: %w", q.Report, err)
			}
			if !kept(row, keep) {
				continue
			}
			if i := bucketIndex(bucketStarts, st, s.t); i >= 0 {
				per[i] = append(per[i], s)
			}
		}
	} else {
		maxBuckets := maxTimedBuckets
		if dq.MaxDataPoints > 0 && int(dq.MaxDataPoints) < maxBuckets {
			maxBuckets = int(dq.MaxDataPoints)
		}
		st = ceilMinute(step(from, to, backend.DataQuery{Interval: dq.Interval, MaxDataPoints: int64(maxBuckets)}))
		bucketStarts = starts(from, to, st)
		per = make([][]sample, len(bucketStarts))
		rows, ex, err := rep.samples(ctx, rn, q, from, to)
		if err != nil {
			return nil, err
		}
		executed = "GET " + ex + ", bucketed by " + st.String()
		for _, s := range rows {
			if i := bucketIndex(bucketStarts, st, s.t); i >= 0 {
				per[i] = append(per[i], s)
			}
		}
	}
	f, err := seriesFrame(rep.title(), q, metrics, bucketStarts, per)
	if err != nil {
		return nil, err
	}
	f.Meta.ExecutedQueryString = executed
	for _, fl := range f.Fields[:1] {
		fl.Config = &data.FieldConfig{Interval: float64(st.Milliseconds())}
	}
	return f, nil
}

// bucketIndex is the index of the bucket of t in starts, -1 if none.
func bucketIndex(starts []time.Time, step time.Duration, t time.Time) int {
	if len(starts) == 0 || t.Before(starts[0]) {
		return -1
	}
	if i := int(t.Sub(starts[0]) / step); i < len(starts) {
		return i
	}
	return -1
}

func ceilMinute(d time.Duration) time.Duration {
	return (d + time.Minute - 1) / time.Minute * time.Minute
}

// pointSample reads one point of a series: its time, the values of the
// query's groupings (absent: none) and its counts (null: absent).
func pointSample(row map[string]json.RawMessage, groupBy []string, metrics []MetricInfo) (sample, error) {
	s := sample{dims: make([]string, len(groupBy)), vals: make([]float64, len(metrics)), ok: make([]bool, len(metrics))}
	if err := json.Unmarshal(row["time"], &s.t); err != nil {
		return s, fmt.Errorf("time: %w", err)
	}
	for i, g := range groupBy {
		if raw, ok := row[g]; ok {
			if err := json.Unmarshal(raw, &s.dims[i]); err != nil {
				return s, fmt.Errorf("%s: %w", g, err)
			}
		}
	}
	for i, m := range metrics {
		raw, ok := row[m.Name]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &s.vals[i]); err != nil {
			return s, fmt.Errorf("%s: %w", m.Name, err)
		}
		s.ok[i] = true
	}
	return s, nil
}

// kept reports whether a point has the dimension values keep asks for.
func kept(row map[string]json.RawMessage, keep map[string]string) bool {
	for k, want := range keep {
		var got string
		if raw, ok := row[k]; ok {
			_ = json.Unmarshal(raw, &got)
		}
		if got != want {
			return false
		}
	}
	return true
}

// seriesFrame aggregates the samples of each bucket by grouping key into
// a long frame (every bucket × key, counts zero-filled, latencies null
// when absent) and converts it to a wide one.
func seriesFrame(name string, q Query, metrics []MetricInfo, starts []time.Time, per [][]sample) (*data.Frame, error) {
	type agg struct {
		vals []float64
		ok   []bool
	}
	isMax := func(j int) bool { return metrics[j].Max }
	keys := map[string][]string{}
	byBucket := make([]map[string]*agg, len(starts))
	for i, ss := range per {
		byBucket[i] = map[string]*agg{}
		for _, s := range ss {
			k := strings.Join(s.dims, "\x00")
			keys[k] = s.dims
			a := byBucket[i][k]
			if a == nil {
				a = &agg{vals: make([]float64, len(metrics)), ok: make([]bool, len(metrics))}
				byBucket[i][k] = a
			}
			for j := range metrics {
				if !s.ok[j] {
					continue
				}
				switch {
				case !a.ok[j]:
					a.vals[j] = s.vals[j]
				case isMax(j):
					a.vals[j] = max(a.vals[j], s.vals[j])
				default:
					a.vals[j] += s.vals[j]
				}
				a.ok[j] = true
			}
		}
	}
	order := make([]string, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	slices.Sort(order)
	groupBy := q.GroupBy
	if len(order) == 0 {
		// Nothing in the range: one zero series, so that alerts see 0,
		// not "no data".
		order, groupBy = []string{""}, nil
	}

	long := data.NewFrame(name, data.NewField("time", nil, []time.Time{}))
	for _, g := range groupBy {
		long.Fields = append(long.Fields, data.NewField(g, nil, []string{}))
	}
	for j, m := range metrics {
		if isMax(j) {
			long.Fields = append(long.Fields, data.NewField(m.Name, nil, []*float64{}))
		} else {
			long.Fields = append(long.Fields, data.NewField(m.Name, nil, []float64{}))
		}
	}
	for i, t := range starts {
		for _, k := range order {
			row := []any{t}
			for _, d := range keys[k][:len(groupBy)] {
				row = append(row, d)
			}
			a := byBucket[i][k]
			for j := range metrics {
				switch {
				case isMax(j) && (a == nil || !a.ok[j]):
					row = append(row, (*float64)(nil))
				case isMax(j):
					v := a.vals[j]
					row = append(row, &v)
				case a == nil:
					row = append(row, 0.0)
				default:
					row = append(row, a.vals[j])
				}
			}
			long.AppendRow(row...)
		}
	}

	wide := long
	if len(groupBy) > 0 {
		var err error
		if wide, err = data.LongToWide(long, nil); err != nil {
			return nil, fmt.Errorf("cannot convert the %s series to wide: %w", name, err)
		}
	} else {
		wide.Meta = &data.FrameMeta{Type: data.FrameTypeTimeSeriesWide, TypeVersion: data.FrameTypeVersion{0, 1}}
	}
	for _, f := range wide.Fields[1:] {
		m := metrics[slices.IndexFunc(metrics, func(m MetricInfo) bool { return m.Name == f.Name })]
		display := m.Display
		if len(groupBy) > 0 {
			vals := make([]string, len(groupBy))
			for i, g := range groupBy {
				vals[i] = f.Labels[g]
				if vals[i] == "" {
					vals[i] = "(none)"
				}
			}
			display = strings.Join(vals, " · ")
			if len(metrics) > 1 {
				display = m.Display + ": " + display
			}
		}
		f.Config = &data.FieldConfig{DisplayNameFromDS: display, Unit: m.Unit}
	}
	return wide, nil
}
