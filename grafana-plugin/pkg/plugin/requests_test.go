package plugin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/dashboards"
)

// counter is a reverse proxy in front of the real API that counts the
// requests it forwards.
type counter struct {
	mu    sync.Mutex
	paths []string
	srv   *httptest.Server
}

func newCounter(t *testing.T, target string) *counter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// take returns the requests counted since the last call.
func (c *counter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.paths
	c.paths = nil
	return out
}

// dashboardDefaults are the values Grafana interpolates for the provisioned
// dashboards' variables as they load: every filter at All (or None), the
// adapter thresholds at their defaults.
var dashboardDefaults = strings.NewReplacer(
	`"$tool"`, `"*"`, `"$service"`, `"*"`, `"$environment"`, `"*"`, `"$client"`, `"*"`,
	`"$exclude_client"`, `"*"`, `"$adapter"`, `"*"`, `"$max_share"`, `""`, `"$long_session"`, `"24h"`,
)

// TestOneRequestPerPanel runs every panel of every provisioned dashboard
// over the fixture's week through the plugin against the real API, behind
// a counting proxy: each panel costs one API request.
func TestOneRequestPerPanel(t *testing.T) {
	e := start(t)
	c := newCounter(t, e.apiURL)
	total := 0
	for _, d := range dashboards.All() {
		panels, _ := d.Model["panels"].([]any)
		for _, p := range panels {
			pm := p.(map[string]any)
			for _, target := range pm["targets"].([]any) {
				raw, err := json.Marshal(target)
				if err != nil {
					t.Fatal(err)
				}
				model := dashboardDefaults.Replace(string(raw))
				var q struct {
					QueryType string `json:"queryType"`
				}
				if err := json.Unmarshal([]byte(model), &q); err != nil {
					t.Fatal(err)
				}
				dr := e.queryAt(t, c.srv.URL, q.QueryType, model, e.week(), 0)
				if dr.Error != nil {
					t.Errorf("%s / %s: %v", d.File, pm["title"], dr.Error)
				}
				got := c.take()
				if len(got) != 1 {
					t.Errorf("%s / %s: %d API requests, want 1: %v", d.File, pm["title"], len(got), got)
				}
				total += len(got)
			}
		}
	}
	t.Logf("%d API requests for the panels of %d dashboards over 7 days", total, len(dashboards.All()))
}
