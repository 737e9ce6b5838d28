package ingest

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// newSecureServer starts a server on w with opts, shut down at the end of
// the test.
func newSecureServer(t *testing.T, cfg Config, w *sink, opts ...Option) *Server {
	t.Helper()
	s, err := New(cfg, w, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func ingestTokens(t *testing.T) (*auth.Tokens, map[string]string) {
	t.Helper()
	path, tk := authtest.TokenFile(t,
		authtest.Token{Name: "acme", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeIngest}},
		authtest.Token{Name: "globex", Tenant: "globex", Scopes: []auth.Scope{auth.ScopeIngest}},
		authtest.Token{Name: "reader", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeAudit}},
	)
	tokens, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tokens, tk
}

// post sends d over OTLP/HTTP protobuf with the Authorization header
// value authz ("" for none).
func post(t *testing.T, hc *http.Client, url, authz string, d drift) httpAnswer {
	t.Helper()
	body := encode(t, encodingProto, d)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", receiver.MediaProto)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return httpAnswer{status: resp.StatusCode, header: resp.Header}
}

// TestIngestTokens checks that, with tokens, an export is stored under
// its token's tenant over OTLP/HTTP and OTLP/gRPC, and refused without a
// valid token with the ingest scope.
func TestIngestTokens(t *testing.T) {
	tokens, tk := ingestTokens(t)
	w := &sink{}
	s := newSecureServer(t, testConfig(), w, WithTokens(tokens))
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs
	hc := &http.Client{Timeout: 10 * time.Second}

	for _, c := range []struct {
		authz  string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer mcpdrift_unknown", http.StatusUnauthorized},
		{"Basic " + tk["acme"], http.StatusUnauthorized},
		{tk["acme"], http.StatusUnauthorized},
		{"Bearer " + tk["reader"], http.StatusForbidden},
	} {
		a := post(t, hc, url, c.authz, drift{valid: 2})
		if a.status != c.status {
			t.Errorf("Authorization %q: %d, want %d", c.authz, a.status, c.status)
		}
		if c.status == http.StatusUnauthorized && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate")
		}
	}
	if got := s.AuthFailures(); got != 5 {
		t.Errorf("AuthFailures = %d, want 5", got)
	}
	if n := w.total(); n != 0 {
		t.Fatalf("%d events stored from refused exports", n)
	}
	if a := post(t, hc, url, "Bearer "+tk["acme"], drift{valid: 3}); a.status != http.StatusOK {
		t.Fatalf("acme: %d", a.status)
	}
	if a := post(t, hc, url, "bearer "+tk["globex"], drift{valid: 2}); a.status != http.StatusOK {
		t.Fatalf("globex: %d", a.status)
	}

	// gRPC: the authorization metadata.
	cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := plogotlp.NewGRPCClient(cc)
	for _, m := range []struct {
		md   []string
		code codes.Code
	}{
		{nil, codes.Unauthenticated},
		{[]string{"authorization", "Bearer nope"}, codes.Unauthenticated},
		{[]string{"authorization", "Bearer " + tk["reader"]}, codes.PermissionDenied},
		{[]string{"authorization", "Bearer " + tk["globex"]}, codes.OK},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if m.md != nil {
			ctx = metadata.AppendToOutgoingContext(ctx, m.md...)
		}
		_, err := c.Export(ctx, plogotlp.NewExportRequestFromLogs(drift{valid: 4}.logs()))
		cancel()
		if got := status.Code(err); got != m.code {
			t.Errorf("gRPC with %v: %v (%v), want %v", m.md, got, err, m.code)
		}
	}

	byTenant := map[string]int{}
	w.mu.Lock()
	for _, b := range w.batches {
		byTenant[b.Tenant] += len(b.Events)
	}
	w.mu.Unlock()
	if byTenant["acme"] != 3 || byTenant["globex"] != 6 || len(byTenant) != 2 {
		t.Errorf("events by tenant %v, want acme 3 and globex 6 (each batch one tenant's)", byTenant)
	}
}

// TestIngestTLS serves both listeners with mutual TLS over loopback: a
// client with a certificate the CA signed gets through, one without a
// certificate, with a stranger's or in plain text does not.
func TestIngestTLS(t *testing.T) {
	pki := authtest.NewPKI(t)
	srvTLS, err := auth.TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CAFile}.Server()
	if err != nil {
		t.Fatal(err)
	}
	w := &sink{}
	s := newSecureServer(t, testConfig(), w, WithTLS(srvTLS))
	httpURL := "https://" + s.HTTPAddr().String() + receiver.PathLogs
	httpsClient := func(cfg *tls.Config) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	send := func(hc *http.Client, url string) error {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(encode(t, encodingProto, drift{valid: 1})))
		req.Header.Set("Content-Type", receiver.MediaProto)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", url, resp.StatusCode)
		}
		return nil
	}
	if err := send(httpsClient(pki.ClientTLS(&pki.Client)), httpURL); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	if err := send(httpsClient(pki.ClientTLS(nil)), httpURL); err == nil {
		t.Error("without a client certificate: accepted")
	}
	if err := send(httpsClient(pki.ClientTLS(&pki.Stranger)), httpURL); err == nil {
		t.Error("with a certificate the CA did not sign: accepted")
	}
	// Plain HTTP on the TLS listener: Go's TLS server answers 400.
	resp, err := http.Post("http://"+s.HTTPAddr().String()+receiver.PathLogs, receiver.MediaProto, bytes.NewReader(encode(t, encodingProto, drift{valid: 1})))
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS listener: %d", resp.StatusCode)
		}
	}

	grpcExport := func(cfg *tls.Config) error {
		cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = plogotlp.NewGRPCClient(cc).Export(ctx, plogotlp.NewExportRequestFromLogs(drift{valid: 1}.logs()))
		return err
	}
	if err := grpcExport(pki.ClientTLS(&pki.Client)); err != nil {
		t.Fatalf("gRPC with the client certificate: %v", err)
	}
	if err := grpcExport(pki.ClientTLS(nil)); err == nil {
		t.Error("gRPC without a client certificate: accepted")
	}
	if n := w.total(); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
}

// TestIngestRedacts checks that secrets in arguments and attributes are
// redacted before the events reach the store.
func TestIngestRedacts(t *testing.T) {
	r, err := redact.New(redact.Config{Key: []byte("a test key of 32 bytes, or so..")})
	if err != nil {
		t.Fatal(err)
	}
	w := &sink{}
	s := newSecureServer(t, testConfig(), w, WithRedactor(r))
	ld := drift{valid: 1}.logs()
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	lr.Attributes().PutStr(otelschema.AttrArgsRaw, `{"user":"bob","password":"hunter2","note":"Bearer abcdefgh12345678","max_tokens":256,"author":"ann"}`)
	lr.Attributes().PutStr(otelschema.AttrArgsNormalized, `{"password":"hunter2"}`)
	lr.Attributes().PutStr("http.request.header.x-api-key", "k-123456")
	lr.Attributes().PutStr("gen_ai.usage.input_tokens", "512")
	sendLogs(t, "http://"+s.HTTPAddr().String()+receiver.PathLogs, ld)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.batches) != 1 || len(w.batches[0].Events) != 1 {
		t.Fatalf("batches %v", w.batches)
	}
	e := w.batches[0].Events[0]
	for _, v := range []string{e.ArgsRaw, e.ArgsNormalized, e.Attributes["http.request.header.x-api-key"]} {
		if strings.Contains(v, "hunter2") || strings.Contains(v, "abcdefgh12345678") || strings.Contains(v, "k-123456") || !strings.Contains(v, redact.MarkerPrefix) {
			t.Errorf("not redacted: %s", v)
		}
	}
	if m := r.Marker("hunter2"); !strings.Contains(e.ArgsRaw, m) || !strings.Contains(e.ArgsNormalized, m) {
		t.Errorf("equal secrets, different markers: %s / %s", e.ArgsRaw, e.ArgsNormalized)
	}
	// Keys that only contain a rule's letters keep their values.
	if !strings.Contains(e.ArgsRaw, `"max_tokens":256`) || !strings.Contains(e.ArgsRaw, `"author":"ann"`) ||
		e.Attributes["gen_ai.usage.input_tokens"] != "512" {
		t.Errorf("benign keys redacted: %s %v", e.ArgsRaw, e.Attributes)
	}
	if s.Redacted() != 4 {
		t.Errorf("Redacted() = %d, want 4", s.Redacted())
	}
}

func sendLogs(t *testing.T, url string, ld plog.Logs) {
	t.Helper()
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, receiver.MediaProto, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", resp.StatusCode)
	}
}

// TestTenantSpoolsCount: the spool gauges of Stats and the readiness of
// the spool cover every tenant's spool, not only the default tenant's.
func TestTenantSpoolsCount(t *testing.T) {
	tokens, tk := ingestTokens(t)
	cfg := testConfig()
	cfg.Spool = spool.Config{Dir: t.TempDir(), MaxBytes: 64 << 10, SegmentBytes: 32 << 10}
	cfg.Ack = AckSpooled
	w := &sink{fail: func(store.Batch) error { return errors.New("store down") }}
	s := newSecureServer(t, cfg, w, WithTokens(tokens))
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs
	hc := &http.Client{Timeout: 10 * time.Second}
	if a := post(t, hc, url, "Bearer "+tk["globex"], drift{valid: 40}); a.status != http.StatusOK {
		t.Fatalf("globex: %d", a.status)
	}
	if st := s.Stats(); st.Spool.Records == 0 || st.Spool.Bytes == 0 {
		t.Errorf("Stats().Spool = %+v with globex's export in its spool, want it counted", st.Spool)
	}
	for range 20 {
		if a := post(t, hc, url, "Bearer "+tk["globex"], drift{valid: 40}); a.status != http.StatusOK {
			break
		}
	}
	if err := s.SpoolReady(); !errors.Is(err, ErrSpoolNearlyFull) || !strings.Contains(err.Error(), "tenant globex") {
		t.Errorf("SpoolReady with globex's spool full: %v, want ErrSpoolNearlyFull naming the tenant", err)
	}
	// The store back, the spools drain before the shutdown.
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
}
