// Package plugin is the backend of the mcpdrift Grafana data source: it
// reads the mcpdrift HTTP API and answers Grafana's queries (report tables,
// time series of the reports' counts, template variable values) and
// health checks. It is pure Go and links nothing of the store.
package plugin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// ID is the plugin's id, as plugin.json declares it.
const ID = "mcpdrift-mcpdrift-datasource"

// Make sure Datasource implements the SDK's interfaces.
var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// Datasource is one configured mcpdrift data source.
type Datasource struct {
	settings Settings
	// settingsErr is the configuration's fault, reported by every query
	// and by the health check.
	settingsErr error
	http        *http.Client
}

// NewDatasource builds a data source instance from its settings. Invalid
// settings do not fail the instance: queries and the health check report
// them, so that the configuration page can say what to fix.
func NewDatasource(ctx context.Context, src backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	s, err := LoadSettings(ctx, src)
	if err == nil {
		err = s.Validate()
	}
	hc, hcErr := newHTTPClient(s)
	if hcErr != nil {
		return nil, hcErr
	}
	log.DefaultLogger.Debug("mcpdrift data source instance created", "url", s.URL, "token_set", s.Token != "",
		"tls", s.HTTP.TLS != nil, "client_certificate", s.TLSClientAuth, "custom_headers", len(s.HTTP.Header))
	return &Datasource{settings: s, settingsErr: err, http: hc}, nil
}

// Dispose releases the instance's idle connections when its settings
// change.
func (d *Datasource) Dispose() { d.http.CloseIdleConnections() }

// runner runs the queries of one request.
type runner struct {
	s Settings
	c *client
}

func (d *Datasource) runner() *runner {
	return &runner{s: d.settings, c: newClient(d.settings, d.http)}
}

// QueryData answers each query on its own: a failed query fails only its
// own response.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	rn := d.runner()
	for _, dq := range req.Queries {
		if d.settingsErr != nil {
			resp.Responses[dq.RefID] = errorResponse(d.settingsErr)
			continue
		}
		frame, err := rn.query(ctx, dq)
		if err != nil {
			resp.Responses[dq.RefID] = errorResponse(err)
			continue
		}
		frame.RefID = dq.RefID
		resp.Responses[dq.RefID] = backend.DataResponse{Frames: data.Frames{frame}}
	}
	return resp, nil
}

// query answers one query.
func (rn *runner) query(ctx context.Context, dq backend.DataQuery) (*data.Frame, error) {
	q, err := parseQuery(dq.JSON)
	if err != nil {
		return nil, err
	}
	if err := q.validate(dq.QueryType); err != nil {
		return nil, err
	}
	from, to := dq.TimeRange.From.UTC(), dq.TimeRange.To.UTC()
	switch dq.QueryType {
	case QueryTypeTimeSeries:
		return rn.seriesQuery(ctx, q, dq)
	case QueryTypeVariable:
		return rn.variableQuery(ctx, q, from, to)
	case QueryTypeRevisions:
		return rn.revisionsQuery(ctx, q)
	}
	return reports[dq.QueryType].table(ctx, rn, q, from, to)
}

// CheckHealth says whether the API answers, which version it runs, whether
// its store is ready and whether it accepts the token, in words a person
// can act on.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	fail := func(format string, args ...any) (*backend.CheckHealthResult, error) {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: fmt.Sprintf(format, args...)}, nil
	}
	if d.settingsErr != nil {
		return fail("%v", d.settingsErr)
	}
	rn := d.runner()
	ctx, cancel := context.WithTimeout(ctx, min(d.settings.Timeout(), 15*time.Second))
	defer cancel()

	var health struct {
		Status  string `json:"status"`
		Version string `json:"version"`
	}
	if err := rn.c.get(ctx, "/healthz", nil, &health); err != nil {
		return fail("The mcpdrift API at %s did not answer its health check: %v. Check the URL and that `mcpdrift serve` (or the api binary) is running and reachable from the Grafana server.", d.settings.URL, err)
	}
	version := health.Version
	if version == "" {
		version = "unknown version"
	}
	var ready struct {
		Status string `json:"status"`
	}
	if err := rn.c.get(ctx, "/readyz", nil, &ready); err != nil {
		return fail("The mcpdrift API %s at %s is up, but not ready: %v. Check its store (the embedded data directory or the ClickHouse server).", version, d.settings.URL, err)
	}
	// A cheap authenticated request tells whether the token is accepted.
	var tools apiv1.ReportBody[apiv1.ToolRow]
	// The token is the token field or a custom Authorization header.
	tokenSent := d.settings.Token != "" || d.settings.HTTP.Header.Get("Authorization") != ""
	v := url.Values{apiv1.ParamFrom: {"-5m"}, apiv1.ParamTo: {"now"}}
	token := "token accepted"
	if err := rn.c.get(ctx, "/api/v1/tools", v, &tools); err != nil {
		if isAuthProblem(err) {
			if !tokenSent {
				return fail("The mcpdrift API %s at %s requires a token: %v. Paste an API token in the data source settings.", version, d.settings.URL, err)
			}
			return fail("The mcpdrift API %s at %s rejected the token: %v. Paste a valid API token in the data source settings.", version, d.settings.URL, err)
		}
		return fail("The mcpdrift API %s at %s is ready, but a report request failed: %v.", version, d.settings.URL, err)
	}
	if !tokenSent {
		token = "no token configured, and the API accepts requests without one"
	}
	return &backend.CheckHealthResult{
		Status:  backend.HealthStatusOk,
		Message: fmt.Sprintf("mcpdrift API %s at %s is reachable and ready; %s.", version, d.settings.URL, token),
	}, nil
}
