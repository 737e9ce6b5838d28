package plugin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Sentinel errors.
var (
	// ErrInvalidSettings is a data source configuration the plugin cannot
	// use.
	ErrInvalidSettings = errors.New("invalid data source settings")
	// ErrInvalidQuery is a query the plugin cannot run: an unknown query
	// type, report, metric or grouping, or a malformed field.
	ErrInvalidQuery = errors.New("invalid query")
)

// Problem is an RFC 9457 problem document, as the mcpdrift API answers
// every error.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Parameter string `json:"parameter,omitempty"`
}

func (p *Problem) Error() string {
	msg := fmt.Sprintf("mcpdrift API: %d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	if p.Parameter != "" {
		msg += " (parameter " + p.Parameter + ")"
	}
	return msg
}

// errorResponse turns err into a data response: API problems, unreachable
// APIs and bad queries are the user's or the API's, so they carry the
// downstream error source; the HTTP status of a problem becomes the
// response status.
func errorResponse(err error) backend.DataResponse {
	status := backend.StatusInternal
	var p *Problem
	switch {
	case errors.As(err, &p):
		status = backend.Status(p.Status)
		err = backend.DownstreamError(err)
	case errors.Is(err, ErrInvalidQuery), errors.Is(err, ErrInvalidSettings):
		status = backend.StatusBadRequest
		err = backend.DownstreamError(err)
	case backend.IsDownstreamHTTPError(err):
		status = backend.StatusBadGateway
		err = backend.DownstreamError(err)
	}
	r := backend.ErrorResponseWithErrorSource(err)
	r.Status = status
	return r
}

// isAuthProblem reports whether err is the API refusing the credentials.
func isAuthProblem(err error) bool {
	var p *Problem
	return errors.As(err, &p) && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden)
}
