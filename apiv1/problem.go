package apiv1

import "fmt"

// Problem is an RFC 9457 problem document, the body of every error.
type Problem struct {
	// Type is "about:blank": the status says what kind of problem it is.
	Type string `json:"type"`
	// Title is the status's reason phrase.
	Title  string `json:"title"`
	Status int    `json:"status"`
	// Detail explains this occurrence.
	Detail string `json:"detail"`
	// Parameter names the request parameter (or header) at fault.
	Parameter string `json:"parameter,omitempty"`
}

// Error renders the problem as one line.
func (p *Problem) Error() string {
	msg := fmt.Sprintf("%d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	if p.Parameter != "" {
		msg += " (parameter " + p.Parameter + ")"
	}
	return msg
}

// Health is the body of /healthz and /readyz.
type Health struct {
	// Status is "ok" (healthz) or "ready" (readyz).
	Status string `json:"status"`
	// Version is the server's build, on /healthz.
	Version string `json:"version,omitempty"`
}
