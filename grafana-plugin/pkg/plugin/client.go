package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// maxResponseBytes bounds an API answer the plugin reads.
const maxResponseBytes = 64 << 20

// client reads the mcpdrift API over HTTP. It is pure Go: the plugin never
// links the store.
type client struct {
	base  string
	token string
	http  *http.Client
}

// newHTTPClient builds the SDK's HTTP client from the settings' options:
// TLS, the client certificate, the custom headers, Grafana's tracing and
// metrics. Settings whose TLS material does not parse still get a client
// (without it), so that the instance lives and Validate's error reaches
// the configuration page.
func newHTTPClient(s Settings) (*http.Client, error) {
	hc, err := httpclient.New(s.HTTP)
	if err == nil {
		return hc, nil
	}
	opts := s.HTTP
	opts.TLS = nil
	hc, err2 := httpclient.New(opts)
	if err2 != nil {
		return nil, fmt.Errorf("cannot build the http client: %w", errors.Join(err, err2))
	}
	return hc, nil
}

func newClient(s Settings, hc *http.Client) *client {
	return &client{base: strings.TrimRight(s.URL, "/"), token: s.Token, http: hc}
}

// get requests path with q and decodes a 200 JSON answer into dest; any
// other answer becomes an *apiv1.Problem carrying the API's detail,
// wrapped in an error that says it is the mcpdrift API's.
func (c *client) get(ctx context.Context, path string, q url.Values, dest any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("cannot build the request for %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the mcpdrift API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("cannot read the answer of %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		p := &apiv1.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" || mt == "application/json" {
			_ = json.Unmarshal(body, p)
			p.Status = resp.StatusCode
		}
		if p.Detail == "" {
			p.Detail = strings.TrimSpace(string(body))
			if len(p.Detail) > 200 {
				p.Detail = p.Detail[:200] + "…"
			}
		}
		return fmt.Errorf("mcpdrift API: %w", p)
	}
	if err := json.Unmarshal(body, dest); err != nil {
		return fmt.Errorf("cannot decode the answer of %s (%d bytes): %w", path, len(body), err)
	}
	return nil
}
