package plugin_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

var update = flag.Bool("update", false, "regenerate the golden frames under testdata")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	reporttest.Close()
	os.Exit(code)
}

// env is a real API over the fixture store on loopback and a real plugin
// gRPC server in front of it, shared by the package's tests: the SDK
// registers its metrics once per process.
type env struct {
	now    time.Time
	apiURL string
	api    *api.Server
	tp     datasourcetest.TestPlugin
}

var (
	envOnce sync.Once
	shared  *env
	envErr  error
)

// start returns the shared environment, starting the API (clock pinned at
// the fixture's Now) and the plugin on first use. It skips when libchdb is
// missing, unless MCPDRIFT_REQUIRE_CHDB is set.
func start(t *testing.T) *env {
	t.Helper()
	fx := reporttest.Open(t)
	envOnce.Do(func() { shared, envErr = startEnv(fx) })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return shared
}

func startEnv(fx *reporttest.Fixture) (*env, error) {
	cfg := api.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Tenant = reporttest.TenantA
	s, err := api.New(cfg, fx.Store, fx.Runner, "v1.2.3-test", nil, api.WithClock(func() time.Time { return fx.Now }))
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	// The plugin serves gRPC on a free loopback port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	tp, err := datasourcetest.Manage(plugin.NewDatasource, datasourcetest.ManageOpts{Address: addr})
	if err != nil {
		return nil, err
	}
	return &env{now: fx.Now, apiURL: "http://" + s.Addr(), api: s, tp: tp}, nil
}

func (e *env) close() {
	_ = e.tp.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.api.Shutdown(ctx)
}

// instances numbers the data source instances: the SDK keeps one per id
// and update time, so each configuration gets its own.
var instances atomic.Int64

func pluginContext(url, jsonData, token string) backend.PluginContext {
	n := instances.Add(1)
	if jsonData == "" {
		jsonData = "{}"
	}
	return backend.PluginContext{
		OrgID:    1,
		PluginID: plugin.ID,
		DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
			ID: n, UID: fmt.Sprintf("mcpdrift-%d", n), Name: "mcpdrift", URL: url,
			JSONData:                json.RawMessage(jsonData),
			DecryptedSecureJSONData: map[string]string{"token": token},
			Updated:                 time.Unix(n, 0),
		},
	}
}

// week is the fixture's week as a Grafana time range.
func (e *env) week() backend.TimeRange {
	return backend.TimeRange{From: e.now.Add(-7 * 24 * time.Hour), To: e.now}
}

func (e *env) query(t *testing.T, queryType, model string, tr backend.TimeRange, interval time.Duration) backend.DataResponse {
	t.Helper()
	return e.queryAt(t, e.apiURL, queryType, model, tr, interval)
}

// queryAt runs one query through the plugin against the API at apiURL.
func (e *env) queryAt(t *testing.T, apiURL, queryType, model string, tr backend.TimeRange, interval time.Duration) backend.DataResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := e.tp.Client.QueryData(ctx, &backend.QueryDataRequest{
		PluginContext: pluginContext(apiURL, "", "s3cret-token"),
		Queries: []backend.DataQuery{{
			RefID: "A", QueryType: queryType, JSON: json.RawMessage(model),
			TimeRange: tr, Interval: interval, MaxDataPoints: 1000,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dr, ok := resp.Responses["A"]
	if !ok {
		t.Fatal("no response for refId A")
	}
	return dr
}

// goldenCases are the queries whose frames are kept under testdata.
var goldenCases = []struct {
	name, queryType, model string
	interval               time.Duration
}{
	{"table_stale_usage", plugin.QueryTypeStaleUsage, `{}`, 0},
	{"table_stale_usage_prod", plugin.QueryTypeStaleUsage, `{"environment":"prod","tool":"*"}`, 0},
	{"table_rejections", plugin.QueryTypeRejections, `{}`, 0},
	{"table_repairs", plugin.QueryTypeRepairs, `{}`, 0},
	{"table_adapter_retirement", plugin.QueryTypeAdapterRetirement, `{"maxCalls":5}`, 0},
	{"table_adapter_retirement_exclude_ci", plugin.QueryTypeAdapterRetirement, `{"maxCalls":5,"excludeClients":["ci-runner"]}`, 0},
	{"table_adapter_retirement_share", plugin.QueryTypeAdapterRetirement, `{"maxShare":"10%","longSession":"72h"}`, 0},
	{"table_adapter_retirement_one", plugin.QueryTypeAdapterRetirement, `{"window":"14d","adapter":"delete_branch/3-4","maxCalls":5}`, 0},
	{"table_propagation", plugin.QueryTypePropagation, `{}`, 0},
	{"table_violations", plugin.QueryTypeViolations, `{}`, 0},
	{"table_violations_mixed", plugin.QueryTypeViolations, `{"kind":"mixed_revision"}`, 0},
	{"table_audit_run", plugin.QueryTypeAudit, `{"run":"legacy-run-1"}`, 0},
	{"series_stale_usage_by_tool_revision", plugin.QueryTypeTimeSeries, `{"report":"stale-usage","groupBy":["tool","revision_client"]}`, 24 * time.Hour},
	{"series_stale_usage_counts", plugin.QueryTypeTimeSeries, `{"report":"stale-usage","metrics":["calls","normalized","rejected"]}`, 24 * time.Hour},
	{"series_rejections_by_code", plugin.QueryTypeTimeSeries, `{"report":"rejections","metrics":["rejected"],"groupBy":["error_code"]}`, 24 * time.Hour},
	{"series_rejections_side_effect", plugin.QueryTypeTimeSeries, `{"report":"rejections","metrics":["side_effect_violations"]}`, 24 * time.Hour},
	{"series_repairs", plugin.QueryTypeTimeSeries, `{"report":"repairs","metrics":["automatic_repairs","human_approvals","abandons","retry_calls"]}`, 24 * time.Hour},
	{"series_adapter_by_adapter", plugin.QueryTypeTimeSeries, `{"report":"adapter-retirement","groupBy":["adapter"]}`, 24 * time.Hour},
	{"series_adapter_one", plugin.QueryTypeTimeSeries, `{"report":"adapter-retirement","adapter":"delete_branch/3-4"}`, 24 * time.Hour},
	{"series_propagation", plugin.QueryTypeTimeSeries, `{"report":"propagation","metrics":["notified_sessions","never_refreshed","lag_p95_ms"],"groupBy":["tool"]}`, 24 * time.Hour},
	{"series_violations_by_kind", plugin.QueryTypeTimeSeries, `{"report":"violations","groupBy":["kind"]}`, 6 * time.Hour},
	{"series_audit_stale_by_client", plugin.QueryTypeTimeSeries, `{"report":"audit","staleOnly":true,"groupBy":["client"]}`, 24 * time.Hour},
	{"variable_tools", plugin.QueryTypeVariable, `{"variable":"tools"}`, 0},
	{"variable_services", plugin.QueryTypeVariable, `{"variable":"services"}`, 0},
	{"variable_environments", plugin.QueryTypeVariable, `{"variable":"environments"}`, 0},
	{"variable_clients", plugin.QueryTypeVariable, `{"variable":"clients"}`, 0},
	{"variable_clients_none", plugin.QueryTypeVariable, `{"variable":"clients","none":true}`, 0},
	{"series_stale_usage_by_client", plugin.QueryTypeTimeSeries, `{"report":"stale-usage","metrics":["stale_calls"],"groupBy":["client"],"excludeClients":["ci-runner"]}`, 24 * time.Hour},
	{"variable_adapters", plugin.QueryTypeVariable, `{"variable":"adapters"}`, 0},
	{"table_revision_sources", plugin.QueryTypeRevisionSources, `{}`, 0},
	{"table_contract_errors", plugin.QueryTypeContractErrors, `{}`, 0},
	{"table_contract_errors_tool", plugin.QueryTypeContractErrors, `{"tool":"create_issue"}`, 0},
	{"series_revision_sources", plugin.QueryTypeTimeSeries, `{"report":"revision-sources","metrics":["declared","listed","inferred","unknown"]}`, 24 * time.Hour},
	{"series_revision_sources_share_by_client", plugin.QueryTypeTimeSeries, `{"report":"revision-sources","metrics":["unknown_share"],"groupBy":["client"]}`, 24 * time.Hour},
	{"series_contract_errors_by_client", plugin.QueryTypeTimeSeries, `{"report":"contract-errors","groupBy":["client"]}`, 24 * time.Hour},
	{"series_contract_errors_refreshes", plugin.QueryTypeTimeSeries, `{"report":"contract-errors","metrics":["refreshes","failed_refreshes","refresh_failure_rate"]}`, 24 * time.Hour},
	{"table_revisions", plugin.QueryTypeRevisions, `{"tool":"deploy_preview"}`, 0},
	{"table_revisions_other_service", plugin.QueryTypeRevisions, `{"tool":"deploy_preview","service":"docs"}`, 0},
}

func TestGoldenFrames(t *testing.T) {
	e := start(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			dr := e.query(t, tc.queryType, tc.model, e.week(), tc.interval)
			if dr.Error != nil {
				t.Fatalf("query failed: %v", dr.Error)
			}
			experimental.CheckGoldenJSONResponse(t, "testdata", tc.name, &dr, *update)
		})
	}
}

// TestSeriesForAlerting checks that a time series is numeric and wide, as
// Grafana's alerting needs, and that an empty range gives zeros, not "no
// data".
func TestSeriesForAlerting(t *testing.T) {
	e := start(t)
	dr := e.query(t, plugin.QueryTypeTimeSeries, `{"report":"rejections","metrics":["side_effect_violations"]}`, e.week(), time.Hour)
	if dr.Error != nil {
		t.Fatal(dr.Error)
	}
	f := dr.Frames[0]
	if typ := f.TimeSeriesSchema().Type; typ.String() != "wide" {
		t.Fatalf("frame is %s, want a wide time series", typ)
	}
	if len(f.Fields) != 2 || !f.Fields[1].Type().Numeric() {
		t.Fatalf("want one numeric series, got %v", f.Fields)
	}
	var total float64
	for i := range f.Fields[1].Len() {
		v, _ := f.Fields[1].FloatAt(i)
		total += v
	}
	if total == 0 {
		t.Error("the fixture has rejected calls with side effect started; the series sums to 0")
	}

	future := backend.TimeRange{From: e.now.Add(24 * time.Hour), To: e.now.Add(26 * time.Hour)}
	dr = e.query(t, plugin.QueryTypeTimeSeries, `{"report":"adapter-retirement","adapter":"delete_branch/3-4","groupBy":["adapter"]}`, future, time.Hour)
	if dr.Error != nil {
		t.Fatal(dr.Error)
	}
	f = dr.Frames[0]
	if len(f.Fields) != 2 || f.Fields[1].Len() != 2 {
		t.Fatalf("want one series of two hourly zeros, got %v", f.Fields)
	}
	for i := range f.Fields[1].Len() {
		if v, _ := f.Fields[1].FloatAt(i); v != 0 {
			t.Errorf("point %d = %v, want 0", i, v)
		}
	}
}

// TestRevisionsTable reads the fixture's registry through the plugin:
// deployer-0 advertised deploy_preview 1 from Now-10d to Now-8d+10m,
// deployer-1 revision 2 from Now-8d, so 2 overlapped 1 by 10 minutes;
// removing dry_run under additionalProperties false is a bounded
// migration.
func TestRevisionsTable(t *testing.T) {
	e := start(t)
	dr := e.query(t, plugin.QueryTypeRevisions, `{"tool":"deploy_preview","environment":"prod"}`, e.week(), 0)
	if dr.Error != nil {
		t.Fatal(dr.Error)
	}
	f := dr.Frames[0]
	if n, _ := f.RowLen(); n != 2 {
		t.Fatalf("%d rows, want revisions 1 and 2", n)
	}
	field := func(name string, row int) any {
		t.Helper()
		fl, _ := f.FieldByName(name)
		if fl == nil {
			t.Fatalf("no field %q", name)
		}
		return fl.At(row)
	}
	str := func(v any) string {
		if p, ok := v.(*string); ok && p != nil {
			return *p
		}
		return "<null>"
	}
	for row, want := range []struct {
		revision, previous, class string
		first                     time.Time
		overlap                   *int64
	}{
		{"1", "", "<null>", e.now.Add(-10 * 24 * time.Hour), nil},
		{"2", "1", "bounded_migration", e.now.Add(-8 * 24 * time.Hour), ptr(int64(600))},
	} {
		if got := field("revision", row); got != want.revision {
			t.Errorf("row %d revision %v, want %s", row, got, want.revision)
		}
		if got := field("previous", row); got != want.previous {
			t.Errorf("row %d previous %v, want %q", row, got, want.previous)
		}
		if got := field("first_advertised", row).(time.Time); !got.Equal(want.first) {
			t.Errorf("row %d first advertised %v, want %v", row, got, want.first)
		}
		if got := field("instances", row); got != int64(1) {
			t.Errorf("row %d instances %v, want 1", row, got)
		}
		got := field("overlap_s", row).(*int64)
		if (got == nil) != (want.overlap == nil) || got != nil && *got != *want.overlap {
			t.Errorf("row %d overlap %v, want %v", row, got, want.overlap)
		}
		if got := str(field("change_class", row)); got != want.class {
			t.Errorf("row %d change class %s, want %s", row, got, want.class)
		}
	}
	if got := str(field("findings", 1)); !strings.Contains(got, "`dry_run` was removed") {
		t.Errorf("findings of revision 2: %q, want the removal of dry_run", got)
	}
}

func ptr[T any](v T) *T { return &v }

func TestQueryErrors(t *testing.T) {
	e := start(t)
	cases := []struct {
		name, queryType, model string
		status                 backend.Status
		want                   string
	}{
		{"no query type", "", `{}`, backend.StatusBadRequest, "no query type"},
		{"unknown query type", "tables", `{}`, backend.StatusBadRequest, `unknown query type "tables"`},
		{"unknown report", plugin.QueryTypeTimeSeries, `{"report":"usage"}`, backend.StatusBadRequest, `unknown report "usage"`},
		{"unknown metric", plugin.QueryTypeTimeSeries, `{"report":"repairs","metrics":["calls"]}`, backend.StatusBadRequest, `no count "calls"`},
		{"unknown grouping", plugin.QueryTypeTimeSeries, `{"report":"repairs","groupBy":["client"]}`, backend.StatusBadRequest, `cannot be grouped by "client"`},
		{"bad window", plugin.QueryTypeAdapterRetirement, `{"window":"fortnight"}`, backend.StatusBadRequest, `window "fortnight"`},
		{"revisions without a tool", plugin.QueryTypeRevisions, `{"tool":"*"}`, backend.StatusBadRequest, "a revisions query needs a tool"},
		{"malformed model", plugin.QueryTypeRepairs, `{"tool":3}`, backend.StatusBadRequest, "cannot parse the query model"},
		// The API's own problem detail comes through.
		{"api problem", plugin.QueryTypeAdapterRetirement, `{"maxShare":"150%"}`, backend.StatusBadRequest, "must be between 0 and 1"},
		{"api problem cursor", plugin.QueryTypeAdapterRetirement, `{"topClients":500}`, backend.StatusBadRequest, "top_clients"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dr := e.query(t, tc.queryType, tc.model, e.week(), 0)
			if dr.Error == nil {
				t.Fatalf("want an error, got %d frames", len(dr.Frames))
			}
			if !strings.Contains(dr.Error.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", dr.Error, tc.want)
			}
			if dr.Status != tc.status {
				t.Errorf("status = %d, want %d", dr.Status, tc.status)
			}
			if dr.ErrorSource != backend.ErrorSourceDownstream {
				t.Errorf("error source = %q, want downstream", dr.ErrorSource)
			}
		})
	}
}

func TestCheckHealth(t *testing.T) {
	e := start(t)
	check := func(t *testing.T, pc backend.PluginContext) *backend.CheckHealthResult {
		t.Helper()
		res, err := e.tp.Client.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: pc})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tokens := e.tokenAPI(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	cases := []struct {
		name   string
		pc     backend.PluginContext
		status backend.HealthStatus
		want   []string
	}{
		{"ok", pluginContext(e.apiURL, "", "s3cret-token"), backend.HealthStatusOk,
			[]string{"v1.2.3-test", "reachable and ready", "token accepted"}},
		{"ok without token", pluginContext(e.apiURL, "", ""), backend.HealthStatusOk,
			[]string{"no token configured"}},
		{"no url", pluginContext("", "", ""), backend.HealthStatusError, []string{"set the API URL"}},
		{"bad url", pluginContext("mcpdrift:8080", "", ""), backend.HealthStatusError, []string{"absolute http:// or https:// URL"}},
		{"unreachable", pluginContext(dead.URL, "", ""), backend.HealthStatusError,
			[]string{"did not answer its health check", "Check the URL"}},
		{"token accepted", pluginContext(tokens.url, "", tokens.reader), backend.HealthStatusOk,
			[]string{"reachable and ready", "token accepted"}},
		{"token refused", pluginContext(tokens.url, "", "mcpdrift_wrong"), backend.HealthStatusError,
			[]string{"rejected the token", "not valid", "Paste a valid API token"}},
		{"token missing", pluginContext(tokens.url, "", ""), backend.HealthStatusError,
			[]string{"requires a token", "Paste an API token"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.pc)
			if res.Status != tc.status {
				t.Errorf("status = %v, want %v (%s)", res.Status, tc.status, res.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Message, w) {
					t.Errorf("message %q does not contain %q", res.Message, w)
				}
			}
			if strings.Contains(res.Message, "s3cret-token") || strings.Contains(res.Message, "mcpdrift_wrong") ||
				strings.Contains(res.Message, tokens.reader) {
				t.Errorf("message %q shows the token", res.Message)
			}
		})
	}
}

// tokenAPI is a second API over the fixture that requires tokens: reader
// may read the reports, not the audit.
type tokenAPI struct {
	url, reader, auditor string
}

func (e *env) tokenAPI(t *testing.T) tokenAPI {
	t.Helper()
	path, toks := authtest.TokenFile(t,
		authtest.Token{Name: "reader", Tenant: reporttest.TenantA, Scopes: []auth.Scope{auth.ScopeRead}},
		authtest.Token{Name: "auditor", Tenant: reporttest.TenantA, Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeAudit}})
	tokens, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := reporttest.Open(t)
	cfg := api.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	s, err := api.New(cfg, fx.Store, fx.Runner, "v1.2.3-test", nil,
		api.WithClock(func() time.Time { return fx.Now }), api.WithTokens(tokens))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return tokenAPI{url: "http://" + s.Addr(), reader: toks["reader"], auditor: toks["auditor"]}
}

// TestTokens checks the token reaches the API and its refusals come back
// as the API's problems; a variable falls back when the audit is refused.
func TestTokens(t *testing.T) {
	e := start(t)
	tokens := e.tokenAPI(t)
	run := func(t *testing.T, token, queryType, model string) backend.DataResponse {
		t.Helper()
		resp, err := e.tp.Client.QueryData(context.Background(), &backend.QueryDataRequest{
			PluginContext: pluginContext(tokens.url, "", token),
			Queries:       []backend.DataQuery{{RefID: "A", QueryType: queryType, JSON: json.RawMessage(model), TimeRange: e.week()}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Responses["A"]
	}
	if dr := run(t, tokens.reader, plugin.QueryTypeRepairs, `{}`); dr.Error != nil || dr.Frames[0].Rows() == 0 {
		t.Fatalf("reader's repairs: %v", dr.Error)
	}
	dr := run(t, tokens.reader, plugin.QueryTypeAudit, `{"run":"legacy-run-1"}`)
	if dr.Error == nil || dr.Status != 403 || dr.ErrorSource != backend.ErrorSourceDownstream || !strings.Contains(dr.Error.Error(), "audit scope") {
		t.Errorf("reader's audit: status %d source %q error %v; want a downstream 403 naming the audit scope", dr.Status, dr.ErrorSource, dr.Error)
	}
	if dr := run(t, tokens.auditor, plugin.QueryTypeAudit, `{"run":"legacy-run-1"}`); dr.Error != nil || dr.Frames[0].Rows() == 0 {
		t.Errorf("auditor's audit: %v", dr.Error)
	}
	dr = run(t, "", plugin.QueryTypeRepairs, `{}`)
	if dr.Error == nil || dr.Status != 401 || !strings.Contains(dr.Error.Error(), "bearer token") {
		t.Errorf("no token: status %d error %v; want 401 asking for a bearer token", dr.Status, dr.Error)
	}
	// Services come from the other reports when the audit is refused.
	dr = run(t, tokens.reader, plugin.QueryTypeVariable, `{"variable":"services"}`)
	if dr.Error != nil {
		t.Fatal(dr.Error)
	}
	if f := dr.Frames[0]; f.Rows() == 0 || f.Meta == nil || len(f.Meta.Notices) == 0 {
		t.Errorf("reader's services: %d values, meta %+v; want values and a notice", f.Rows(), f.Meta)
	}
}
