package receiver

import (
	"net/http"
	"time"
)

// RequestObserver records each OTLP/HTTP request answered: its route (the
// signal's path, /v1/logs or /v1/traces; "" for any other path), method,
// status and duration, refused requests included.
type RequestObserver interface {
	ObserveRequest(route, method string, status int, d time.Duration)
}

// WithRequestObserver has o record every OTLP/HTTP request.
func WithRequestObserver(o RequestObserver) Option { return func(s *Server) { s.observer = o } }

// observeHTTP wraps h so that the observer, if any, records each request.
func (s *Server) observeHTTP(h http.Handler) http.Handler {
	if s.observer == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		route := ""
		if r.URL.Path == PathLogs || r.URL.Path == PathTraces {
			route = r.URL.Path
		}
		s.observer.ObserveRequest(route, r.Method, sw.code(), time.Since(start))
	})
}

// statusWriter keeps the status code of the answer it writes.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code returns the status answered: 200 when the handler wrote nothing.
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
