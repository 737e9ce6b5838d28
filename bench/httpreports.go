package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// HTTPTiming is one report timed through the HTTP API, as a client reads
// it: the request on loopback, the server's queries and its JSON encoding,
// the client's read and decoding of the whole answer.
type HTTPTiming struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Path string `json:"path"`
	// AsLoaded is on the store as the load left it: its parts as written,
	// the background merges let finish; Optimized after OPTIMIZE FINAL of
	// every table.
	AsLoaded  *Latency `json:"as_loaded,omitempty"`
	Optimized *Latency `json:"optimized,omitempty"`
	// Bytes is the size of the last answer's body.
	Bytes int `json:"bytes"`
}

// httpReports serves the API over a store, with the clock fixed, on a
// loopback listener.
type httpReports struct {
	srv    *api.Server
	client apiclient.Client
	query  url.Values
	tool   string
}

// startHTTPReports starts the API over st, as the serve role builds it
// (its default configuration on a loopback port, the queries over the
// store's database), its clock fixed at load.Clock.
func startHTTPReports(st *embedded.Store, db string, load *LoadResult, auditTool string, log *slog.Logger) (*httpReports, error) {
	clock := func() time.Time { return load.Clock }
	r, err := queries.New(st, db, queries.WithRetentionDays(embedded.DefaultConfig("").Schema.RetentionDays), queries.WithClock(clock))
	if err != nil {
		return nil, err
	}
	cfg := api.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	srv, err := api.New(cfg, st, r, "bench", log, api.WithClock(clock))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set(apiv1.ParamFrom, load.From.Format(time.RFC3339Nano))
	q.Set(apiv1.ParamTo, load.To.Format(time.RFC3339Nano))
	return &httpReports{srv: srv, query: q, tool: auditTool,
		client: apiclient.Client{BaseURL: "http://" + srv.Addr(), HTTP: &http.Client{}}}, nil
}

func (h *httpReports) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.srv.Shutdown(ctx)
}

// path returns the endpoint of report name and its query.
func (h *httpReports) path(name string) (string, url.Values) {
	if name == "audit" {
		q := url.Values{}
		for k, v := range h.query {
			q[k] = v
		}
		q.Set(apiv1.ParamTool, h.tool)
		return "/api/v1/audit/calls", q
	}
	return "/api/v1/reports/" + name, h.query
}

// measure times every report: cfg.ReportWarmups unmeasured requests, then
// cfg.ReportRuns measured ones; set stores each latency into its timing,
// which it finds or appends in timings.
func (h *httpReports) measure(ctx context.Context, cfg Config, timings []HTTPTiming, set func(*HTTPTiming, *Latency)) ([]HTTPTiming, error) {
	var errs []error
	for i, name := range reportNames {
		if err := ctx.Err(); err != nil {
			return timings, err
		}
		path, q := h.path(name)
		if i >= len(timings) {
			timings = append(timings, HTTPTiming{Name: name, ID: reportCaseID(name), Path: path})
		}
		t := &timings[i]
		var runs []run
		var err error
		for k := range cfg.ReportWarmups + cfg.ReportRuns {
			var answer any
			cpu0, t0 := processCPU(), time.Now()
			body, gerr := h.client.Get(ctx, path, q)
			if gerr == nil {
				gerr = json.Unmarshal(body, &answer)
			}
			d := run{wall: time.Since(t0), cpu: processCPU() - cpu0}
			if gerr != nil {
				err = fmt.Errorf("%s over HTTP: %w", name, gerr)
				break
			}
			t.Bytes = len(body)
			if k >= cfg.ReportWarmups {
				runs = append(runs, d)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l := latencyOf(runs, 0)
		set(t, &l)
	}
	return timings, errors.Join(errs...)
}

// reportCaseID is a report's name in figure ids: stale-usage → stale_usage.
func reportCaseID(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}
