package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/app"
)

// TestTracesFromEnv checks which environments export traces, and that an
// exporter or protocol mcpdrift cannot use fails naming its variable.
func TestTracesFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		traced  bool
		wantErr string
	}{
		{"nothing", nil, false, ""},
		{"sampler only", map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_SERVICE_NAME": "x"}, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, ""},
		{"traces endpoint over grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, true, ""},
		{"exporter otlp, default endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, ""},
		{"exporter zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"protocol http/json", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
				"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			p, err := app.TracesFromEnv(context.Background(), "mcpdrift", "v-test")
			switch {
			case tc.wantErr != "":
				if !errors.Is(err, app.ErrTraceConfig) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("TracesFromEnv: %v, want an ErrTraceConfig naming %s", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got := p != nil; got != tc.traced {
				t.Errorf("traced = %v, want %v", got, tc.traced)
			}
			if got := p.Tracer("t") != nil; got != tc.traced {
				t.Errorf("Tracer != nil: %v, want %v", got, tc.traced)
			}
			// Nothing listens at port 1: the spans ended so far (none) are
			// flushed without an export.
			if err := p.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}
