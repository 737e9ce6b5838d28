package receiver

import (
	"net/http"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// serveTraces serves POST /v1/traces: spans that follow the OpenTelemetry
// MCP semantic conventions become drift events (otelschema.DecodeTraces),
// every other span is ignored. It answers as serveLogs does, counting
// rejected spans in partial_success.rejected_spans.
func (s *Server) serveTraces(w http.ResponseWriter, r *http.Request) {
	req := ptraceotlp.NewExportRequest()
	enc, ok := s.readRequest(w, r, PathTraces, req)
	if !ok {
		return
	}
	res, err := s.ingestTraces(r.Context(), req.Traces())
	if err != nil {
		s.writeIngestError(w, r, enc, err)
		return
	}
	s.writeResponse(w, enc, tracesResponse(res))
}
