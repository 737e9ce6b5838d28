package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Bounds of a time series.
const (
	// maxTimedBuckets bounds the buckets of a series bucketed from rows
	// that carry their time (violations, audit).
	maxTimedBuckets = 1000
	// bucketConcurrency is how many bucket requests run at once; the
	// embedded store runs its queries one at a time anyway.
	bucketConcurrency = 4
)

// buckets splits [from, to) into buckets of at least interval, whole
// minutes (the rollups' resolution), aligned to multiples of the bucket,
// no more than maxBuckets of them. It returns the bucket starts and the
// step.
func buckets(from, to time.Time, interval time.Duration, maxBuckets int) ([]time.Time, time.Duration) {
	step := max(interval, time.Minute)
	span := to.Sub(from)
	if n := time.Duration(maxBuckets); n > 0 && span/step >= n {
		step = (span + n - 1) / n
	}
	step = ((step + time.Minute - 1) / time.Minute) * time.Minute
	var out []time.Time
	for b := from.Truncate(step); b.Before(to); b = b.Add(step) {
		out = append(out, b)
	}
	return out, step
}

// seriesQuery answers a timeseries query: the chosen counts of a report
// per bucket of the range, one series per combination of the grouping
// dimensions, as a wide time series frame.
func (rn *runner) seriesQuery(ctx context.Context, q Query, dq backend.DataQuery) (*data.Frame, error) {
	rep := reports[q.Report]
	from, to := dq.TimeRange.From.UTC(), dq.TimeRange.To.UTC()
	if !from.Before(to) {
		return nil, fmt.Errorf("%w: the time range is empty", ErrInvalidQuery)
	}
	maxBuckets := rn.s.MaxBucketRequests
	if rep.timed() {
		maxBuckets = maxTimedBuckets
		if dq.MaxDataPoints > 0 && int(dq.MaxDataPoints) < maxBuckets {
			maxBuckets = int(dq.MaxDataPoints)
		}
	}
	starts, step := buckets(from, to, dq.Interval, maxBuckets)
	metrics := metricsOf(rep, q)

	// per[i] are the samples of bucket i.
	per := make([][]sample, len(starts))
	var executed string
	if rep.timed() {
		rows, ex, err := rep.samples(ctx, rn, q, from, to)
		if err != nil {
			return nil, err
		}
		executed = "GET " + ex + ", bucketed by " + step.String()
		for _, s := range rows {
			i := int(s.t.Sub(starts[0]) / step)
			if i >= 0 && i < len(per) {
				per[i] = append(per[i], s)
			}
		}
	} else {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs = make([]error, len(starts))
			sem  = make(chan struct{}, bucketConcurrency)
		)
		for i, b := range starts {
			lo, hi := maxTime(b, from), minTime(b.Add(step), to)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				rows, ex, err := rep.samples(ctx, rn, q, lo, hi)
				if err != nil {
					errs[i] = err
					return
				}
				per[i] = rows
				if i == 0 {
					mu.Lock()
					executed = ex
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		executed = fmt.Sprintf("GET %s … once per %s bucket, %d requests", executed, step, len(starts))
	}
	f, err := seriesFrame(rep.title(), q, metrics, starts, per)
	if err != nil {
		return nil, err
	}
	f.Meta.ExecutedQueryString = executed
	for _, fl := range f.Fields[:1] {
		fl.Config = &data.FieldConfig{Interval: float64(step.Milliseconds())}
	}
	return f, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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
