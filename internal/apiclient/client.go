// Package apiclient reads mcpdrift's HTTP API: a Client that requests it,
// answering every error as an apiv1.Problem, and the bodies of the release
// check and the registry, which carry internal/toolchange's and
// internal/registry's types (the reports' rows and envelopes are apiv1's).
// It does not link the server (internal/api, gin), which serves these
// types: the CLI and the release gate read the API through it.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// maxResponseBytes bounds a response the Client reads.
const maxResponseBytes = 256 << 20

// Client reads the API: the CLI's way to a running server, or, through
// HandlerTransport, to a server in the same process.
type Client struct {
	// BaseURL is the API's root, such as http://127.0.0.1:8080.
	BaseURL string
	// HTTP is the client requests go through; nil means
	// http.DefaultClient.
	HTTP *http.Client
	// Token, when set, is sent as the bearer token of every request.
	Token string
}

// Get requests path with the query and returns the body of a 200 answer;
// any other answer is returned as an *apiv1.Problem.
func (c *Client) Get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	return c.do(ctx, http.MethodGet, path, q, nil)
}

// PostJSON posts body as JSON to path with query q and decodes the 200
// answer into dest; any other answer is an *apiv1.Problem, as Get returns
// it.
func (c *Client) PostJSON(ctx context.Context, path string, q url.Values, body, dest any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("cannot encode the request to %s: %w", path, err)
	}
	answer, err := c.do(ctx, http.MethodPost, path, q, b)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, dest); err != nil {
		return fmt.Errorf("cannot decode the answer of %s (%d bytes): %w", path, len(answer), err)
	}
	return nil
}

// do sends one request (a JSON body when body is not nil) and returns the
// body of a 200 answer, or the answer as an *apiv1.Problem.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte) ([]byte, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("cannot build request for %s: %w", u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil && (strings.Contains(err.Error(), "malformed HTTP") || req.URL.Scheme == "http" && speaksHTTP2(ctx, req.URL.Host)) {
		// net/http quotes the first bytes it read, binary from an HTTP/2
		// or gRPC listener (an OTLP port): they help nobody. Such a
		// listener may also close the connection before net/http reads
		// them, which then reports a bare EOF; a second connection, read
		// without writing, tells it by the server's preface.
		return nil, fmt.Errorf("%s is not an mcpdrift API (answered with HTTP/2 or gRPC?): is it an OTLP port?", c.BaseURL)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot reach the API: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("cannot read the answer of %s: %w", u, err)
	}
	if resp.StatusCode == http.StatusOK {
		return answer, nil
	}
	p := &apiv1.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "application/problem+json" || mt == "application/json":
		_ = json.Unmarshal(answer, p)
	case mt != "" && !strings.HasPrefix(mt, "text/"):
		// Binary, such as the protobuf status of an OTLP/HTTP receiver.
		p.Detail = fmt.Sprintf("%s answered with %s, not as an mcpdrift API does: is it an OTLP port?", c.BaseURL, mt)
	}
	if p.Detail == "" {
		p.Detail = printable(answer)
	}
	return nil, p
}

// GetJSON requests path as JSON and decodes the answer into dest.
func (c *Client) GetJSON(ctx context.Context, path string, q url.Values, dest any) error {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set(apiv1.ParamFormat, "json")
	body, err := c.Get(ctx, path, q2)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, dest); err != nil {
		return fmt.Errorf("cannot decode the answer of %s (%d bytes): %w", path, len(body), err)
	}
	return nil
}

// HandlerTransport is a RoundTripper that serves every request with h in
// this process, without a network: a Client over it reads a server that
// does not listen.
func HandlerTransport(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler and returns what it wrote.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// maxDetailRunes bounds the detail taken from an answer that is not a
// problem document.
const maxDetailRunes = 200

// printable is the start of an answer that is not a problem document, as
// one line of printable text: another server's page, never its raw bytes.
func printable(answer []byte) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(string(answer)) {
		if n == maxDetailRunes {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError || !unicode.IsPrint(r):
			continue
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

// speaksHTTP2 reports whether the server at host (host:port) opens a
// connection with an HTTP/2 server preface, a SETTINGS frame, before the
// client writes anything: what a gRPC or h2c listener sends, and an
// HTTP/1.1 server never does. It waits at most a second.
func speaksHTTP2(ctx context.Context, host string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	// A frame header: a 24-bit length, then the type, 0x4 for SETTINGS.
	var h [9]byte
	if _, err := io.ReadFull(conn, h[:]); err != nil {
		return false
	}
	return h[3] == 0x4
}
