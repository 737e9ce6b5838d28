package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestCollectorManifest parses the repository's deploy/otelcol/bench-builder.yaml
// as the suite does before building it, and broken copies of it: a
// component missing, one at another version, one the suite does not run,
// no provider. It builds nothing.
func TestCollectorManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", collectorManifest))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", collectorManifest, err)
	}
	if m.Dist.Name != "otelcol-mcpdrift-bench" {
		t.Errorf("dist.name %q: the gateway's Collector is otelcol-mcpdrift, the bench's must differ", m.Dist.Name)
	}
	src := string(data)
	exporter := collectorModules["clickhouse"] + " v" + m.Dist.Version
	batch := collectorModules["batch"] + " v" + m.Dist.Version
	provider := "  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider"
	for _, c := range []struct{ name, from, to, want string }{
		{"no exporter", "  - gomod: " + exporter + "\n", "", "clickhouse: " + collectorModules["clickhouse"] + " is not in the manifest"},
		{"another version", batch, collectorModules["batch"] + " v0.150.0", "at v0.150.0, not the dist version " + m.Dist.Version},
		{"an extra component", "exporters:\n", "exporters:\n  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v" + m.Dist.Version + "\n", "holds 4 components, the suite runs 3"},
		{"no file provider", provider, "  - gomod: example.com/nothing", "no go.opentelemetry.io/collector/confmap/provider/fileprovider"},
		{"no env provider", "  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider", "  - gomod: example.com/nothing", "no go.opentelemetry.io/collector/confmap/provider/envprovider"},
		{"an unknown key", "dist:\n", "dist:\n  colour: blue\n", "field colour not found"},
	} {
		if !strings.Contains(src, c.from) {
			t.Fatalf("%s: the manifest has no %q to change", c.name, c.from)
		}
		_, err := parseManifest([]byte(strings.Replace(src, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestCollectorConfig checks that the Collector's configuration is YAML
// whose pipeline uses exactly the components of the manifest, with the
// batch size and addresses it was given.
func TestCollectorConfig(t *testing.T) {
	var c struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					GRPC struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"grpc"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
		Processors struct {
			Batch struct {
				Size    int    `yaml:"send_batch_size"`
				MaxSize int    `yaml:"send_batch_max_size"`
				Timeout string `yaml:"timeout"`
			} `yaml:"batch"`
		} `yaml:"processors"`
		Exporters struct {
			ClickHouse struct {
				Endpoint string `yaml:"endpoint"`
				Timeout  string `yaml:"timeout"`
			} `yaml:"clickhouse"`
		} `yaml:"exporters"`
		Service struct {
			Telemetry map[string]any `yaml:"telemetry"`
			Pipelines map[string]struct {
				Receivers  []string `yaml:"receivers"`
				Processors []string `yaml:"processors"`
				Exporters  []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(collectorConfig("127.0.0.1:4317", "tcp://127.0.0.1:9000", 123456))))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if got := c.Receivers.OTLP.Protocols.GRPC.Endpoint; got != "127.0.0.1:4317" {
		t.Errorf("receiver endpoint %q", got)
	}
	if b := c.Processors.Batch; b.Size != 123456 || b.MaxSize != 123456 {
		t.Errorf("batch %+v, want batches of 123456", b)
	}
	if e := c.Exporters.ClickHouse; e.Endpoint != "tcp://127.0.0.1:9000" || e.Timeout != "120s" {
		t.Errorf("exporter %+v, want the endpoint given and a 120s timeout (the default 5 s duplicates rows)", e)
	}
	p, ok := c.Service.Pipelines["logs"]
	if len(c.Service.Pipelines) != 1 || !ok {
		t.Fatalf("pipelines %+v, want logs alone", c.Service.Pipelines)
	}
	for _, typ := range append(append(p.Receivers, p.Processors...), p.Exporters...) {
		if _, ok := collectorModules[typ]; !ok {
			t.Errorf("component %s is not one the manifest builds", typ)
		}
	}
	if n := len(p.Receivers) + len(p.Processors) + len(p.Exporters); n != len(collectorModules) {
		t.Errorf("the pipeline has %d components, the manifest %d", n, len(collectorModules))
	}
}

// TestCheckStored checks the collector suite's correctness check: a
// stored count that differs from the events sent, either way, fails the
// run, as do unanswered requests and rejected records.
func TestCheckStored(t *testing.T) {
	for _, c := range []struct {
		name             string
		requests, want   int
		rejected         int64
		stored, sent     int64
		wantErrSubstring string
	}{
		{"all stored", 400, 400, 0, 200000, 200000, ""},
		{"rows lost", 400, 400, 0, 199500, 200000, "holds 199500 rows, 200000 events were sent"},
		{"rows doubled", 400, 400, 0, 200500, 200000, "holds 200500 rows, 200000 events were sent"},
		{"requests unanswered", 399, 400, 0, 200000, 200000, "399 of 400 requests acknowledged"},
		{"records rejected", 400, 400, 3, 200000, 200000, "3 records rejected: partial"},
	} {
		err := checkStored(c.requests, c.want, c.rejected, "partial", c.stored, c.sent)
		switch {
		case c.wantErrSubstring == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErrSubstring != "" && (err == nil || !strings.Contains(err.Error(), c.wantErrSubstring)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErrSubstring)
		}
	}
}
