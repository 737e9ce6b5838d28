package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// mtlsAPI is an API over the fixture serving mutual TLS with tokens on,
// and the PEM texts a user pastes into the configuration page.
type mtlsAPI struct {
	url, token                string
	ca, clientCert, clientKey string
}

func startMTLSAPI(t *testing.T) mtlsAPI {
	t.Helper()
	pki := authtest.NewPKI(t)
	path, toks := authtest.TokenFile(t, authtest.Token{Name: "reader", Tenant: reporttest.TenantA, Scopes: []auth.Scope{auth.ScopeRead}})
	tokens, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := reporttest.Open(t)
	cfg := api.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.TLS = auth.TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CAFile}
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
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return mtlsAPI{url: "https://" + s.Addr(), token: toks["reader"],
		ca: read(pki.CAFile), clientCert: read(pki.ClientCert), clientKey: read(pki.ClientKey)}
}

// savedSettings is a data source as Grafana hands it to the plugin after
// the configuration page saved jsonData and secureJsonData.
func savedSettings(url string, jsonData map[string]any, secure map[string]string) backend.PluginContext {
	n := instances.Add(1)
	b, err := json.Marshal(jsonData)
	if err != nil {
		panic(err)
	}
	return backend.PluginContext{
		OrgID:    1,
		PluginID: plugin.ID,
		DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
			ID: n, UID: fmt.Sprintf("mcpdrift-tls-%d", n), Name: "mcpdrift", URL: url,
			JSONData: b, DecryptedSecureJSONData: secure, Updated: time.Unix(n, 0),
		},
	}
}

// editorSettings reads testdata/editor_tls_settings.json, the jsonData and
// secureJsonData the configuration page saves when a user pastes the CA,
// the client certificate and key, sets the server name and adds an
// Authorization header (src/components/ConfigEditor.test.tsx checks the
// editor writes exactly that), with the PEM texts and the token put in
// place of its placeholders.
func editorSettings(t *testing.T, m mtlsAPI) (map[string]any, map[string]string) {
	t.Helper()
	b, err := os.ReadFile("testdata/editor_tls_settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		JSONData       map[string]any    `json:"jsonData"`
		SecureJSONData map[string]string `json:"secureJsonData"`
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("<CA certificate PEM>", m.ca, "<client certificate PEM>", m.clientCert,
		"<client key PEM>", m.clientKey, "<token>", m.token)
	for k, v := range saved.SecureJSONData {
		saved.SecureJSONData[k] = fill.Replace(v)
	}
	return saved.JSONData, saved.SecureJSONData
}

// TestTLSSettings connects the plugin's backend to the API serving mutual
// TLS with the settings as the configuration page saves them: the CA, the
// server name, skip-verify, the client certificate and key, a custom
// header. The token travels in the custom Authorization header in the
// first case: the API, which requires tokens, answering the report shows
// it received the header.
func TestTLSSettings(t *testing.T) {
	e := start(t)
	m := startMTLSAPI(t)
	editorJSON, editorSecure := editorSettings(t, m)
	full := func(patch map[string]any) map[string]any {
		j := map[string]any{"timeoutSeconds": 10}
		for k, v := range editorJSON {
			j[k] = v
		}
		for k, v := range patch {
			if v == nil {
				delete(j, k)
			} else {
				j[k] = v
			}
		}
		return j
	}
	secrets := func(drop ...string) map[string]string {
		s := map[string]string{}
		for k, v := range editorSecure {
			s[k] = v
		}
		for _, k := range drop {
			delete(s, k)
		}
		return s
	}
	withToken := secrets("httpHeaderValue1")
	withToken["token"] = m.token

	cases := []struct {
		name     string
		url      string
		jsonData map[string]any
		secure   map[string]string
		ok       bool
		want     []string
	}{
		{"mTLS, CA, server name, token in a custom header", m.url, full(nil), secrets(), true,
			[]string{"reachable and ready", "token accepted"}},
		{"mTLS, CA, token field", m.url, full(map[string]any{"httpHeaderName1": nil}), withToken, true,
			[]string{"token accepted"}},
		{"mTLS with skip-verify instead of the CA", m.url,
			full(map[string]any{"tlsAuthWithCACert": nil, "tlsSkipVerify": true, "serverName": nil}), secrets("tlsCACert"), true,
			[]string{"token accepted"}},
		{"no custom header: no token reaches the API", m.url, full(map[string]any{"httpHeaderName1": nil}), secrets("httpHeaderValue1"), false,
			[]string{"requires a token"}},
		{"no client certificate", m.url, full(map[string]any{"tlsAuth": nil}), secrets("tlsClientCert", "tlsClientKey"), false,
			[]string{"did not answer its health check", "certificate"}},
		{"system CAs only", m.url, full(map[string]any{"tlsAuthWithCACert": nil}), secrets("tlsCACert"), false,
			[]string{"did not answer its health check", "certificate"}},
		{"wrong server name", m.url, full(map[string]any{"serverName": "api.example.org"}), secrets(), false,
			[]string{"did not answer its health check", "api.example.org"}},
		{"client authentication without the key", m.url, full(nil), secrets("tlsClientKey"), false,
			[]string{"paste the client certificate and the client key"}},
		{"CA switch without the CA", m.url, full(nil), secrets("tlsCACert"), false,
			[]string{"paste the CA certificate"}},
		{"TLS settings on an http:// URL", strings.Replace(m.url, "https://", "http://", 1), full(nil), secrets(), false,
			[]string{"apply to an https:// API URL"}},
		{"a CA that is not PEM", m.url, full(nil), func() map[string]string { s := secrets(); s["tlsCACert"] = "not a certificate"; return s }(), false,
			[]string{"TLS certificates", "CA"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pc := savedSettings(tc.url, tc.jsonData, tc.secure)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := e.tp.Client.CheckHealth(ctx, &backend.CheckHealthRequest{PluginContext: pc})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Status == backend.HealthStatusOk) != tc.ok {
				t.Errorf("status = %v, want ok=%v (%s)", res.Status, tc.ok, res.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Message, w) {
					t.Errorf("message %q does not contain %q", res.Message, w)
				}
			}
			for _, secret := range []string{m.token, m.clientKey} {
				if strings.Contains(res.Message, secret) {
					t.Errorf("message %q shows a secret", res.Message)
				}
			}
			if !tc.ok {
				return
			}
			// A report over the same connection.
			resp, err := e.tp.Client.QueryData(ctx, &backend.QueryDataRequest{
				PluginContext: pc,
				Queries:       []backend.DataQuery{{RefID: "A", QueryType: plugin.QueryTypeRepairs, JSON: json.RawMessage(`{}`), TimeRange: e.week()}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if dr := resp.Responses["A"]; dr.Error != nil || len(dr.Frames) != 1 || dr.Frames[0].Rows() == 0 {
				t.Errorf("repairs over mTLS: error %v, %d frames", dr.Error, len(dr.Frames))
			}
		})
	}
}
