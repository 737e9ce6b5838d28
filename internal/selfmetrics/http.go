package selfmetrics

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPRequests times the HTTP requests of the binaries' listeners — the
// API, OTLP/HTTP ingest — by listener, route, method and status code, as
// the histogram mcpdrift_http_request_duration_seconds (its _count is the
// requests served). Routes are the servers' route templates
// (/api/v1/reports/stale-usage, /v1/logs), never raw paths, so that the
// series stay bounded whatever clients request.
type HTTPRequests struct {
	duration *prometheus.HistogramVec
}

// httpBuckets span a health check to a report over a cold table or an
// export waiting on a slow store.
var httpBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// NewHTTPRequests returns the request metrics, to be registered once.
func NewHTTPRequests() *HTTPRequests {
	return &HTTPRequests{duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns,
		Name:      "http_request_duration_seconds",
		Help:      "Duration of the HTTP requests served, by listener (api, otlp_http), route template (unmatched: no route), method and status code.",
		Buckets:   httpBuckets,
	}, []string{"listener", "route", "method", "code"})}
}

// Describe implements prometheus.Collector.
func (h *HTTPRequests) Describe(ch chan<- *prometheus.Desc) { h.duration.Describe(ch) }

// Collect implements prometheus.Collector.
func (h *HTTPRequests) Collect(ch chan<- prometheus.Metric) { h.duration.Collect(ch) }

// Listener returns the recorder of one listener's requests.
func (h *HTTPRequests) Listener(name string) ListenerRequests {
	return ListenerRequests{h: h, listener: name}
}

// ListenerRequests records the requests of one listener; it implements the
// request observers of internal/api and internal/receiver.
type ListenerRequests struct {
	h        *HTTPRequests
	listener string
}

// RouteUnmatched is the route of a request that no route matched.
const RouteUnmatched = "unmatched"

// ObserveRequest records one request: its route template (empty when none
// matched), method, status code and duration.
func (l ListenerRequests) ObserveRequest(route, method string, status int, d time.Duration) {
	if route == "" {
		route = RouteUnmatched
	}
	l.h.duration.WithLabelValues(l.listener, route, methodLabel(method), strconv.Itoa(status)).Observe(d.Seconds())
}

// methodLabel bounds the method label to the methods of RFC 9110 and
// PATCH; anything else is "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch:
		return m
	}
	return "other"
}

// NewBuildInfo returns the gauge mcpdrift_build_info, 1, labelled with the
// binary's version, the Go version it was built with and the VCS revision
// the Go toolchain stamped into it ("unknown" without one; "-dirty" when
// the tree had local changes).
func NewBuildInfo(version string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   ns,
		Name:        "build_info",
		Help:        "A gauge of 1 labelled with the binary's version, Go version and VCS revision.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version(), "revision": revision()},
	})
	g.Set(1)
	return g
}

// revision returns the VCS revision in the binary's build information.
func revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
