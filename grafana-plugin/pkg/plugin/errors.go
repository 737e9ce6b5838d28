package plugin

import (
	"errors"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/mcpdrift/mcpdrift/apiv1"
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

// errorResponse turns err into a data response: API problems, unreachable
// APIs and bad queries are the user's or the API's, so they carry the
// downstream error source; the HTTP status of a problem becomes the
// response status.
func errorResponse(err error) backend.DataResponse {
	status := backend.StatusInternal
	var p *apiv1.Problem
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
	var p *apiv1.Problem
	return errors.As(err, &p) && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden)
}
