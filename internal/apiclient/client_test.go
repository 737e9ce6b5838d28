package apiclient_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
)

// TestClient reads a handler in this process through HandlerTransport: a
// 200 is decoded, any other answer becomes a *Problem, the token is sent.
func TestClient(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer tk":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Unauthorized","status":401,"detail":"no token","parameter":"Authorization"}`))
		case r.URL.Path == "/healthz" && r.URL.Query().Get("format") == "json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok","version":"v1"}`))
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("nothing here\n"))
		}
	})
	c := func(token string) *apiclient.Client {
		return &apiclient.Client{BaseURL: "http://in-process/", HTTP: &http.Client{Transport: apiclient.HandlerTransport(h)}, Token: token}
	}
	ctx := context.Background()

	var got apiv1.Health
	if err := c("tk").GetJSON(ctx, "/healthz", nil, &got); err != nil || got != (apiv1.Health{Status: "ok", Version: "v1"}) {
		t.Fatalf("GetJSON = %+v, %v; want status ok, version v1", got, err)
	}

	f := func(token, path, want string) {
		t.Helper()
		_, err := c(token).Get(ctx, path, nil)
		var p *apiv1.Problem
		if !errors.As(err, &p) {
			t.Fatalf("Get(%s) = %v; want a *Problem", path, err)
		}
		if err.Error() != want {
			t.Errorf("Get(%s) = %q; want %q", path, err, want)
		}
	}
	f("", "/healthz", "401 Unauthorized: no token (parameter Authorization)")
	f("tk", "/nowhere", "404 Not Found: nothing here")
}
