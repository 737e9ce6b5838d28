package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// The dashboards suite (i), run with the reports suite on its load: a
// refresh of the plugin's provisioned dashboards (grafana-plugin/src/
// dashboards) over the loaded week, every panel's query sent to a real API
// on loopback as the plugin sends it, the variables at All (or None), the
// panels one after the other. It counts the requests, checks each answer is
// a 200, and times whole refreshes.

// dashboardsDirs are where the provisioned dashboards are, from the
// repository's root (make bench) or from bench/ (go test).
var dashboardsDirs = []string{filepath.Join("grafana-plugin", "src", "dashboards"), filepath.Join("..", "grafana-plugin", "src", "dashboards")}

// dashboardStep is the interval Grafana asks a 7-day panel for at its usual
// width (about 1,000 points: 10 minutes); the API rounds it up to what the
// rollups hold.
const dashboardStep = 10 * time.Minute

// DashboardRefresh is the measurement of (i).
type DashboardRefresh struct {
	Dashboards int `json:"dashboards"`
	Panels     int `json:"panels"`
	// Requests is the API requests of one refresh.
	Requests int     `json:"requests"`
	Latency  Latency `json:"latency"`
}

// panelRequest is one API request a panel's query makes.
type panelRequest struct {
	dashboard, panel, path string
	params                 url.Values
	// paged requests follow the next cursor, as the plugin does.
	paged bool
}

// reportPaths are the API paths of the plugin's report query types.
var reportPaths = map[string]string{
	"stale-usage": "/api/v1/reports/stale-usage", "rejections": "/api/v1/reports/rejections",
	"repairs": "/api/v1/reports/repairs", "adapter-retirement": "/api/v1/reports/adapter-retirement",
	"propagation": "/api/v1/reports/propagation", "violations": "/api/v1/reports/violations",
	"audit": "/api/v1/audit/calls", "revision-sources": "/api/v1/reports/revision-sources",
	"contract-errors": "/api/v1/reports/contract-errors",
}

// panelRequests reads the dashboards and returns the request of each
// panel's query over [from, to), as the plugin builds it with every
// variable at All: no filter.
func panelRequests(from, to time.Time) (reqs []panelRequest, dashboards int, err error) {
	var dir string
	for _, d := range dashboardsDirs {
		if _, err := os.Stat(d); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		return nil, 0, fmt.Errorf("cannot find the provisioned dashboards in %s", strings.Join(dashboardsDirs, " or "))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, 0, fmt.Errorf("no dashboards in %s: %v", dir, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, 0, err
		}
		var d struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					QueryType string   `json:"queryType"`
					Report    string   `json:"report"`
					GroupBy   []string `json:"groupBy"`
					Kind      string   `json:"kind"`
					Adapter   string   `json:"adapter"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, 0, fmt.Errorf("cannot read %s: %w", file, err)
		}
		dashboards++
		for _, p := range d.Panels {
			for _, t := range p.Targets {
				v := url.Values{}
				v.Set(apiv1.ParamFrom, from.UTC().Format(time.RFC3339Nano))
				v.Set(apiv1.ParamTo, to.UTC().Format(time.RFC3339Nano))
				r := panelRequest{dashboard: filepath.Base(file), panel: p.Title, params: v}
				switch {
				case t.QueryType == "timeseries":
					r.path = reportPaths[t.Report] + "/series"
					v.Set(apiv1.ParamStep, strconv.Itoa(int(dashboardStep/time.Second)))
					groupBy := slices.Clone(t.GroupBy)
					if t.Report == "violations" && t.Kind != "" && !slices.Contains(groupBy, "kind") {
						groupBy = append(groupBy, "kind")
					}
					for _, g := range groupBy {
						v.Add(apiv1.ParamGroupBy, g)
					}
				default:
					r.path = reportPaths[t.QueryType]
					r.paged = t.QueryType == "violations" || t.QueryType == "audit"
					if t.QueryType == "adapter-retirement" {
						v.Set(apiv1.ParamLongSession, "24h")
					}
				}
				if r.path == "" || strings.HasPrefix(r.path, "/series") {
					return nil, 0, fmt.Errorf("%s / %s: no API path for query type %q report %q", file, p.Title, t.QueryType, t.Report)
				}
				reqs = append(reqs, r)
			}
		}
	}
	return reqs, dashboards, nil
}

// measureDashboards serves the loaded store's reports over a real API on
// loopback and refreshes the dashboards cfg.ReportRuns times after
// cfg.ReportWarmups unmeasured refreshes.
func measureDashboards(ctx context.Context, cfg Config, st *embedded.Store, db string, load *LoadResult) (*DashboardRefresh, error) {
	clock := load.Clock
	r, err := queries.New(st, db,
		queries.WithRetentionDays(embedded.DefaultConfig("").Schema.RetentionDays),
		queries.WithClock(func() time.Time { return clock }))
	if err != nil {
		return nil, err
	}
	acfg := api.DefaultConfig()
	acfg.Listen = "127.0.0.1:0"
	acfg.Tenant = store.DefaultTenant
	srv, err := api.New(acfg, st, r, "bench", nil, api.WithClock(func() time.Time { return clock }))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	reqs, dashboards, err := panelRequests(load.From, load.To)
	if err != nil {
		return nil, err
	}
	base := "http://" + srv.Addr()
	hc := &http.Client{Timeout: 5 * time.Minute}
	get := func(req panelRequest) (int, error) {
		v := req.params
		n := 0
		for {
			if req.paged {
				v.Set(apiv1.ParamLimit, "1000")
			}
			hr, err := http.NewRequestWithContext(ctx, http.MethodGet, base+req.path+"?"+v.Encode(), nil)
			if err != nil {
				return n, err
			}
			hr.Header.Set("Accept", "application/json")
			resp, err := hc.Do(hr)
			if err != nil {
				return n, err
			}
			n++
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return n, err
			}
			if resp.StatusCode != http.StatusOK {
				return n, fmt.Errorf("%s / %s: GET %s: %d %s", req.dashboard, req.panel, req.path, resp.StatusCode, body)
			}
			var page struct {
				Next string `json:"next"`
			}
			if err := json.Unmarshal(body, &page); err != nil || !req.paged || page.Next == "" {
				return n, err
			}
			v.Set(apiv1.ParamCursor, page.Next)
		}
	}
	out := &DashboardRefresh{Dashboards: dashboards, Panels: len(reqs)}
	var runs []run
	for i := range cfg.ReportWarmups + cfg.ReportRuns {
		cpu0, t0 := processCPU(), time.Now()
		requests := 0
		for _, req := range reqs {
			n, err := get(req)
			requests += n
			if err != nil {
				return out, err
			}
		}
		if i >= cfg.ReportWarmups {
			runs = append(runs, run{wall: time.Since(t0), cpu: processCPU() - cpu0})
		}
		out.Requests = requests
	}
	out.Latency = latencyOf(runs, 0)
	return out, nil
}

// dashboardFigures derives (i): a refresh's wall time and its requests.
func (r *Report) dashboardFigures(add func(Figure)) {
	d := r.Dashboards
	if d == nil || d.Latency.Runs == 0 {
		return
	}
	label := fmt.Sprintf("(i) refresh of the %d provisioned dashboards over the week, %d panels in turn, %d API requests",
		d.Dashboards, d.Panels, d.Requests)
	add(Figure{ID: "dashboards.refresh_p50_ms", Label: label + ", p50", Value: d.Latency.P50Ms, Unit: "ms"})
	add(Figure{ID: "dashboards.refresh_p95_ms", Label: label + ", p95", Value: d.Latency.P95Ms, Unit: "ms"})
	add(Figure{ID: "dashboards.requests", Label: "(i) API requests of one dashboards refresh", Value: float64(d.Requests), Unit: "requests"})
}
