package receiver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Option configures a Server: its security (tokens, TLS, redaction),
// its request observer and its tracer.
type Option func(*Server)

// WithTokens makes the receiver accept only exports that carry a bearer
// token with the ingest scope — the OTLP/HTTP Authorization header, the
// OTLP/gRPC authorization metadata — and hand their events to the Sink
// under the token's tenant; others are answered 401 / UNAUTHENTICATED (403
// / PERMISSION_DENIED for a token without the ingest scope).
func WithTokens(tokens *auth.Tokens) Option { return func(s *Server) { s.sec.tokens = tokens } }

// WithTLS makes both listeners serve TLS with cfg; a cfg that requires
// client certificates makes them mutual TLS.
func WithTLS(cfg *tls.Config) Option { return func(s *Server) { s.sec.tls = cfg } }

// WithRedactor redacts every decoded event before it is batched, spooled,
// stored or logged.
func WithRedactor(r *redact.Redactor) Option { return func(s *Server) { s.sec.redactor = r } }

// security is the ingester's authentication, TLS and redaction.
type security struct {
	tokens   *auth.Tokens
	tls      *tls.Config
	redactor *redact.Redactor
	// authFailures counts exports refused for their token.
	authFailures atomic.Uint64
}

// AuthFailures returns how many exports were refused for their token.
func (s *Server) AuthFailures() uint64 { return s.sec.authFailures.Load() }

// Redacted returns how many values redaction replaced.
func (s *Server) Redacted() uint64 {
	if s.sec.redactor == nil {
		return 0
	}
	return s.sec.redactor.Redacted()
}

// redact applies the redactor, if any, to events.
func (s *Server) redact(events []otelschema.Event) {
	if s.sec.redactor != nil {
		s.sec.redactor.Events(events)
	}
}

type principalKey struct{}

// authenticate checks an Authorization value. It returns the principal,
// or the HTTP status and message of the refusal.
func (s *Server) authenticate(header string) (auth.Principal, int, string) {
	token, ok := auth.Bearer(header)
	if !ok {
		s.sec.authFailures.Add(1)
		return auth.Principal{}, http.StatusUnauthorized, "this ingester needs a bearer token with the ingest scope: send Authorization: Bearer <token>"
	}
	p, err := s.sec.tokens.Authenticate(token)
	if err != nil {
		s.sec.authFailures.Add(1)
		return auth.Principal{}, http.StatusUnauthorized, "the bearer token is not valid"
	}
	if !p.Has(auth.ScopeIngest) {
		s.sec.authFailures.Add(1)
		return auth.Principal{}, http.StatusForbidden, fmt.Sprintf("token %s lacks the ingest scope", p.TokenID)
	}
	return p, 0, ""
}

// authHTTP wraps the OTLP/HTTP handler with token authentication when
// tokens are configured.
func (s *Server) authHTTP(h http.Handler) http.Handler {
	if s.sec.tokens == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, code, msg := s.authenticate(r.Header.Get("Authorization"))
		if code != 0 {
			s.stats.requests.Add(1)
			enc, ok := parseEncoding(r.Header.Get("Content-Type"))
			if !ok {
				enc = encodingProto
			}
			grpcCode := codes.PermissionDenied
			if code == http.StatusUnauthorized {
				grpcCode = codes.Unauthenticated
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpdrift"`)
			}
			// The body is left unread: the connection is closed after.
			w.Header().Set("Connection", "close")
			s.writeStatus(w, enc, code, grpcCode, msg)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// grpcOptions are the server options of security: TLS credentials,
// keepalive enforcement, and token authentication when configured.
func (s *Server) grpcOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 5 * time.Minute, Time: 2 * time.Minute, Timeout: 20 * time.Second}),
	}
	if s.sec.tls != nil {
		opts = append(opts, grpc.Creds(grpcTLS(s.sec.tls)))
	}
	// Before gRPC reads a message: a request is authenticated, and refused
	// when the in-flight budget is spent, on its headers alone.
	opts = append(opts, grpc.InTapHandle(s.grpcTap))
	return opts
}

// maxHeaderBytes bounds the headers of an OTLP/HTTP request and the
// metadata of an OTLP/gRPC one.
const maxHeaderBytes = 1 << 20

// grpcTap runs on a gRPC call's headers, before its message is read: it
// authenticates the call by its authorization metadata, when tokens are
// configured, and refuses it as RESOURCE_EXHAUSTED, retryable, while the
// in-flight budget is spent. A refusal here costs the ingester no more
// than the headers.
func (s *Server) grpcTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if s.sec.tokens != nil {
		var header string
		if v := info.Header.Get("authorization"); len(v) > 0 {
			header = v[0]
		}
		p, code, msg := s.authenticate(header)
		switch code {
		case 0:
			ctx = context.WithValue(ctx, principalKey{}, p)
		case http.StatusForbidden:
			s.stats.requests.Add(1)
			return ctx, status.Error(codes.PermissionDenied, msg)
		default:
			s.stats.requests.Add(1)
			return ctx, status.Error(codes.Unauthenticated, msg)
		}
	}
	if s.inflight.full() {
		s.stats.requests.Add(1)
		return ctx, s.grpcStatus(ctx, s.inflight.errFull(0))
	}
	return ctx, nil
}

// wrapTLS returns ln serving TLS when configured (OTLP/HTTP; gRPC has its
// credentials).
func (s *Server) wrapTLS(ln net.Listener) net.Listener {
	if s.sec.tls == nil {
		return ln
	}
	cfg := s.sec.tls.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	return tls.NewListener(ln, cfg)
}

// grpcTLS returns the gRPC transport credentials of cfg, negotiating h2.
func grpcTLS(cfg *tls.Config) credentials.TransportCredentials {
	return credentials.NewTLS(cfg.Clone())
}

// initSecurity applies opts.
func (s *Server) initSecurity(opts []Option) {
	for _, o := range opts {
		o(s)
	}
}
