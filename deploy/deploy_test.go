// Package deploy_test checks every deployment file under deploy/ without a
// container engine: compose files are parsed strictly and cross-checked,
// Kubernetes manifests are decoded strictly into the API types, ClickHouse
// XML and the other configs are parsed, and every mcpdrift flag and
// MCPDRIFT_* variable set in them is parsed and validated by the binary it
// is meant for (ingest and api with -config.check, mcpdrift with -h).
package deploy_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// compose covers the Compose specification fields the files use; decoding
// with KnownFields rejects any other, so a typo fails here.
type compose struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image    string `yaml:"image"`
	Hostname string `yaml:"hostname"`
	Build    *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
		Target     string `yaml:"target"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   yaml.Node         `yaml:"depends_on"`
	Profiles    []string          `yaml:"profiles"`
	Restart     string            `yaml:"restart"`
	Ulimits     map[string]struct {
		Soft int `yaml:"soft"`
		Hard int `yaml:"hard"`
	} `yaml:"ulimits"`
	Healthcheck *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
}

// dependsOn returns the services s depends on, in either compose form.
func (s composeService) dependsOn(t *testing.T) []string {
	t.Helper()
	switch s.DependsOn.Kind {
	case 0:
		return nil
	case yaml.SequenceNode:
		var names []string
		if err := s.DependsOn.Decode(&names); err != nil {
			t.Fatal(err)
		}
		return names
	case yaml.MappingNode:
		var m map[string]struct {
			Condition string `yaml:"condition"`
		}
		if err := s.DependsOn.Decode(&m); err != nil {
			t.Fatal(err)
		}
		var names []string
		for n, c := range m {
			if !slices.Contains([]string{"service_started", "service_healthy", "service_completed_successfully"}, c.Condition) {
				t.Errorf("depends_on %s: condition %q", n, c.Condition)
			}
			names = append(names, n)
		}
		return names
	}
	t.Fatalf("depends_on: unexpected YAML kind %v", s.DependsOn.Kind)
	return nil
}

// buildArtifacts are mounted paths that another build produces: they are
// allowed to be missing in a fresh clone.
var buildArtifacts = []string{"grafana-plugin/dist"}

var (
	pinnedImageRE = regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9][A-Za-z0-9._-]*$`)
	portRE        = regexp.MustCompile(`^(?:(?:\d{1,3}\.){3}\d{1,3}:)?(?:\d{1,5}:)?\d{1,5}(?:/(?:tcp|udp))?$`)
)

func strictYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCompose(t *testing.T) {
	files, _ := filepath.Glob("compose/*/compose.yaml")
	if len(files) != 2 {
		t.Fatalf("compose files = %v, want single and cluster", files)
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			var c compose
			strictYAML(t, file, &c)
			dir := filepath.Dir(file)
			checkCompose(t, dir, c)
		})
	}
}

func checkCompose(t *testing.T, dir string, c compose) {
	hostPorts := map[string]string{}
	for name, s := range c.Services {
		if !pinnedImageRE.MatchString(s.Image) || strings.HasSuffix(s.Image, ":latest") {
			t.Errorf("%s: image %q is not pinned by a tag", name, s.Image)
		}
		if s.Build != nil {
			ctx := filepath.Join(dir, s.Build.Context)
			if _, err := os.Stat(filepath.Join(ctx, s.Build.Dockerfile)); err != nil {
				t.Errorf("%s: build: %v", name, err)
			}
			if !dockerfileHasTarget(t, filepath.Join(ctx, s.Build.Dockerfile), s.Build.Target) {
				t.Errorf("%s: the Dockerfile has no stage %q", name, s.Build.Target)
			}
		}
		for _, p := range s.Ports {
			if !portRE.MatchString(p) {
				t.Errorf("%s: port %q", name, p)
				continue
			}
			parts := strings.Split(p, ":")
			if len(parts) >= 2 {
				host := strings.Join(parts[:len(parts)-1], ":")
				hp := parts[len(parts)-2]
				if other, dup := hostPorts[hp]; dup {
					t.Errorf("%s and %s both publish host port %s", name, other, host)
				}
				hostPorts[hp] = name
			}
		}
		for _, v := range s.Volumes {
			src, _, ok := strings.Cut(v, ":")
			if !ok {
				t.Errorf("%s: volume %q has no target", name, v)
				continue
			}
			if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				p := filepath.Join(dir, src)
				if _, err := os.Stat(p); err != nil && !isArtifact(p) {
					t.Errorf("%s: mounted %s does not exist", name, src)
				}
				continue
			}
			if _, ok := c.Volumes[src]; !ok {
				t.Errorf("%s: named volume %s is not declared", name, src)
			}
		}
		for _, d := range s.dependsOn(t) {
			if _, ok := c.Services[d]; !ok {
				t.Errorf("%s depends on unknown service %s", name, d)
			}
		}
		checkMcpdriftArgs(t, name, s)
		for k, v := range s.Environment {
			if k == "MCPDRIFT_ENDPOINT" || k == "MCPDRIFT_API_URL" {
				host, _, _ := strings.Cut(strings.TrimPrefix(v, "http://"), ":")
				if _, ok := c.Services[host]; !ok {
					t.Errorf("%s: %s=%s names no service", name, k, v)
				}
			}
		}
	}
	// Every host a DSN names is a service of the file.
	for name, s := range c.Services {
		for _, a := range s.Command {
			if dsn, ok := strings.CutPrefix(a, "-store.dsn="); ok {
				hosts := dsn[strings.Index(dsn, "@")+1:]
				hosts = hosts[:strings.IndexAny(hosts, "/?")]
				for _, h := range strings.Split(hosts, ",") {
					host, _, _ := strings.Cut(h, ":")
					if _, ok := c.Services[host]; !ok {
						t.Errorf("%s: DSN host %s is not a service", name, host)
					}
				}
			}
		}
	}
}

func isArtifact(p string) bool {
	for _, a := range buildArtifacts {
		if strings.HasSuffix(filepath.ToSlash(p), a) {
			return true
		}
	}
	return false
}

func dockerfileHasTarget(t *testing.T, path, target string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?m)^FROM \S+ AS ` + regexp.QuoteMeta(target) + `$`).Match(data)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binariesBuilt {
		if dir, err := binaries(); err == nil {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// binariesBuilt records whether a test asked for the binaries, so that
// TestMain does not build them only to remove them.
var binariesBuilt bool

// binaries builds ingest, api and mcpdrift once.
var binaries = sync.OnceValues(func() (string, error) {
	binariesBuilt = true
	dir, err := os.MkdirTemp("", "mcpdrift-deploy-test")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/ingest", "./cmd/api", "./cmd/mcpdrift")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

// checkMcpdriftArgs runs the binary a service runs with the service's
// command and environment, in its config-checking mode.
func checkMcpdriftArgs(t *testing.T, name string, s composeService) {
	t.Helper()
	var bin string
	switch {
	case strings.HasPrefix(s.Image, "mcpdrift/ingest:"):
		bin = "ingest"
	case strings.HasPrefix(s.Image, "mcpdrift/api:"):
		bin = "api"
	case strings.HasPrefix(s.Image, "mcpdrift/mcpdrift:"):
		bin = "mcpdrift"
	default:
		return
	}
	runConfigCheck(t, name, bin, s.Command, s.Environment)
}

func runConfigCheck(t *testing.T, name, bin string, args []string, env map[string]string) {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "mcpdrift" {
		args = append(slices.Clone(args), "-h") // parses every flag before it, then exits 0
	} else {
		args = append(slices.Clone(args), "-config.check")
	}
	cmd := exec.Command(filepath.Join(dir, bin), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: %s %s rejects its configuration: %v\n%s", name, bin, strings.Join(args, " "), err, out)
	}
}

func TestRejectedConfigIsReported(t *testing.T) {
	// The check itself must be able to fail: a bad flag in a manifest would
	// otherwise pass unnoticed.
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bin  string
		args []string
		env  []string
		want string
	}{
		{"ingest", []string{"-store.dsn=clickhouse://ch:9000", "-otlp.grpc.listen=nowhere", "-config.check"}, nil, "otlp.grpc.listen"},
		{"api", []string{"-config.check"}, []string{"MCPDRIFT_STORE_DSN=http://ch:8123"}, `scheme "http"`},
		{"api", []string{"-store.dsn=clickhouse://ch:9000", "-no-such-flag", "-config.check"}, nil, "no-such-flag"},
		{"mcpdrift", []string{"simulate", "-sim.rate=fast", "-h"}, nil, "sim.rate"},
	} {
		cmd := exec.Command(filepath.Join(dir, c.bin), c.args...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %v: err %v, output %s; want a failure naming %s", c.bin, c.args, err, out, c.want)
		}
	}
}

// TestXML parses every XML file under deploy/ and checks the cluster's.
func TestXML(t *testing.T) {
	var files []string
	_ = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".xml") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 8 {
		t.Fatalf("found %d XML files: %v", len(files), files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(data))
		root := ""
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: %v", f, err)
				break
			}
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		if root != "clickhouse" {
			t.Errorf("%s: root element %q, want clickhouse", f, root)
		}
	}
}

type clusterXML struct {
	RemoteServers struct {
		Mcpdrift struct {
			Shards []struct {
				InternalReplication bool `xml:"internal_replication"`
				Replicas            []struct {
					Host string `xml:"host"`
					Port int    `xml:"port"`
					User string `xml:"user"`
				} `xml:"replica"`
			} `xml:"shard"`
		} `xml:"mcpdrift"`
	} `xml:"remote_servers"`
	Zookeeper struct {
		Nodes []struct {
			Host string `xml:"host"`
			Port int    `xml:"port"`
		} `xml:"node"`
	} `xml:"zookeeper"`
}

type macrosXML struct {
	Macros struct {
		Cluster string `xml:"cluster"`
		Shard   string `xml:"shard"`
		Replica string `xml:"replica"`
	} `xml:"macros"`
}

func decodeXML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestClusterTopology(t *testing.T) {
	var c compose
	strictYAML(t, "compose/cluster/compose.yaml", &c)
	var cl clusterXML
	decodeXML(t, "compose/cluster/clickhouse/cluster.xml", &cl)
	shards := cl.RemoteServers.Mcpdrift.Shards
	if len(shards) != 2 {
		t.Fatalf("cluster mcpdrift has %d shards, want 2", len(shards))
	}
	seen := map[string]string{} // replica host → shard number
	for i, sh := range shards {
		if !sh.InternalReplication {
			t.Errorf("shard %d: internal_replication must be true with Replicated tables", i+1)
		}
		if len(sh.Replicas) != 2 {
			t.Errorf("shard %d has %d replicas, want 2", i+1, len(sh.Replicas))
		}
		for _, r := range sh.Replicas {
			if _, ok := c.Services[r.Host]; !ok {
				t.Errorf("replica host %s is not a compose service", r.Host)
			}
			if r.Port != 9000 || r.User != "mcpdrift" {
				t.Errorf("replica %s: port %d user %q", r.Host, r.Port, r.User)
			}
			seen[r.Host] = fmt.Sprintf("%02d", i+1)
		}
	}
	for _, n := range cl.Zookeeper.Nodes {
		if _, ok := c.Services[n.Host]; !ok || n.Port != 9181 {
			t.Errorf("keeper node %s:%d is not the keeper service", n.Host, n.Port)
		}
	}
	// Each node mounts its own macros, which agree with remote_servers and
	// name unique replicas.
	replicas := map[string]bool{}
	for host, shard := range seen {
		s := c.Services[host]
		var macros string
		for _, v := range s.Volumes {
			if strings.Contains(v, ":/etc/clickhouse-server/config.d/macros.xml") {
				macros, _, _ = strings.Cut(v, ":")
			}
		}
		if macros == "" {
			t.Errorf("%s mounts no macros", host)
			continue
		}
		var m macrosXML
		decodeXML(t, filepath.Join("compose/cluster", macros), &m)
		if m.Macros.Shard != shard || m.Macros.Cluster != "mcpdrift" || m.Macros.Replica == "" || replicas[m.Macros.Replica] {
			t.Errorf("%s: macros %+v, want shard %s of cluster mcpdrift and a unique replica", host, m.Macros, shard)
		}
		replicas[m.Macros.Replica] = true
	}
	// The mcpdrift processes run in cluster mode on that cluster.
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, "mcpdrift/") && !slices.Contains(s.Command, "-store.cluster=mcpdrift") {
			t.Errorf("%s does not run with -store.cluster=mcpdrift", name)
		}
	}
	// nginx balances over services that exist, two of each role.
	conf, err := os.ReadFile("compose/cluster/nginx/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(conf, []byte("{")) != bytes.Count(conf, []byte("}")) {
		t.Error("nginx.conf: unbalanced braces")
	}
	ups := regexp.MustCompile(`server ([a-z0-9-]+):(\d+);`).FindAllStringSubmatch(string(conf), -1)
	if len(ups) != 6 {
		t.Errorf("nginx upstream servers = %v, want 2 api and 4 ingest entries", ups)
	}
	for _, u := range ups {
		if _, ok := c.Services[u[1]]; !ok {
			t.Errorf("nginx upstream %s is not a compose service", u[1])
		}
	}
}

// gatewayConfig covers the fields of deploy/otelcol/gateway.yaml that the
// tests read; unknown fields fail strict decoding.
type gatewayConfig struct {
	Extensions map[string]any `yaml:"extensions"`
	Receivers  map[string]any `yaml:"receivers"`
	Processors map[string]any `yaml:"processors"`
	Exporters  map[string]struct {
		Endpoint    string            `yaml:"endpoint"`
		TLS         map[string]any    `yaml:"tls"`
		Headers     map[string]string `yaml:"headers"`
		Compression string            `yaml:"compression"`
		Queue       map[string]any    `yaml:"sending_queue"`
		Retry       map[string]any    `yaml:"retry_on_failure"`
	} `yaml:"exporters"`
	Service struct {
		Extensions []string `yaml:"extensions"`
		Pipelines  map[string]struct {
			Receivers  []string `yaml:"receivers"`
			Processors []string `yaml:"processors"`
			Exporters  []string `yaml:"exporters"`
		} `yaml:"pipelines"`
	} `yaml:"service"`
}

// builderManifest covers deploy/otelcol/builder.yaml, the Collector
// Builder's manifest.
type builderManifest struct {
	Dist struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Version     string `yaml:"version"`
	} `yaml:"dist"`
	Receivers  []struct{ GoMod string } `yaml:"receivers"`
	Processors []struct{ GoMod string } `yaml:"processors"`
	Exporters  []struct{ GoMod string } `yaml:"exporters"`
	Extensions []struct{ GoMod string } `yaml:"extensions"`
	Providers  []struct{ GoMod string } `yaml:"providers"`
}

// collectorComponents maps each component type the gateway may use to the
// module that provides it, and the deprecated type names that the pinned
// Collector warns about, to their current names.
var (
	collectorComponents = map[string]string{
		"otlp":            "go.opentelemetry.io/collector/receiver/otlpreceiver",
		"batch":           "go.opentelemetry.io/collector/processor/batchprocessor",
		"filter":          "github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor",
		"otlp_grpc":       "go.opentelemetry.io/collector/exporter/otlpexporter",
		"otlp_http":       "go.opentelemetry.io/collector/exporter/otlphttpexporter",
		"bearertokenauth": "github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension",
		"memory_limiter":  "go.opentelemetry.io/collector/processor/memorylimiterprocessor",
		"health_check":    "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension",
		"file_storage":    "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage",
		"debug":           "go.opentelemetry.io/collector/exporter/debugexporter",
	}
	deprecatedExporters = map[string]string{"otlp": "otlp_grpc", "otlphttp": "otlp_http"}
)

func TestCollectorAndGrafana(t *testing.T) {
	var gw gatewayConfig
	strictYAML(t, "otelcol/gateway.yaml", &gw)
	for name, p := range gw.Service.Pipelines {
		for _, r := range p.Receivers {
			if _, ok := gw.Receivers[r]; !ok {
				t.Errorf("pipeline %s: unknown receiver %s", name, r)
			}
		}
		for _, r := range p.Processors {
			if _, ok := gw.Processors[r]; !ok {
				t.Errorf("pipeline %s: unknown processor %s", name, r)
			}
		}
		for _, r := range p.Exporters {
			if _, ok := gw.Exporters[r]; !ok {
				t.Errorf("pipeline %s: unknown exporter %s", name, r)
			}
		}
	}
	for _, e := range gw.Service.Extensions {
		if _, ok := gw.Extensions[e]; !ok {
			t.Errorf("service: unknown extension %s", e)
		}
	}
	ex, ok := gw.Exporters["otlp_grpc/mcpdrift"]
	if !ok {
		t.Fatalf("no otlp_grpc/mcpdrift exporter in %v", gw.Exporters)
	}
	if !strings.Contains(ex.Endpoint, "${env:MCPDRIFT_ENDPOINT") {
		t.Errorf("exporter endpoint %q does not follow MCPDRIFT_ENDPOINT", ex.Endpoint)
	}
	// The ingest token travels as the authorization metadata that ingest
	// reads (internal/receiver: "authorization", "Bearer <token>").
	if a := ex.Headers["authorization"]; !strings.HasPrefix(a, "Bearer ${env:MCPDRIFT_INGEST_TOKEN") {
		t.Errorf("exporter authorization header %q does not send MCPDRIFT_INGEST_TOKEN as a bearer token", a)
	}
	if !slices.Contains([]string{"", "gzip", "zstd", "snappy", "none"}, ex.Compression) {
		t.Errorf("exporter compression %q is not one ingest accepts over gRPC", ex.Compression)
	}

	// Every component is current (not a deprecated name) and built into the
	// Collector of builder.yaml, whose version the compose files pin.
	var bm builderManifest
	strictYAML(t, "otelcol/builder.yaml", &bm)
	built := map[string]bool{}
	for _, list := range [][]struct{ GoMod string }{bm.Receivers, bm.Processors, bm.Exporters, bm.Extensions} {
		for _, c := range list {
			mod, version, _ := strings.Cut(c.GoMod, " ")
			built[mod] = true
			if v := strings.TrimPrefix(version, "v"); v != bm.Dist.Version {
				t.Errorf("builder.yaml: %s at %s, not the dist version %s", mod, version, bm.Dist.Version)
			}
		}
	}
	check := func(kind string, names map[string]any) {
		for id := range names {
			typ, _, _ := strings.Cut(id, "/")
			if kind == "exporter" {
				if cur, ok := deprecatedExporters[typ]; ok {
					t.Errorf("exporter %s: type %s is deprecated, use %s", id, typ, cur)
					continue
				}
			}
			mod, ok := collectorComponents[typ]
			if !ok {
				t.Errorf("%s %s: type %s has no module in collectorComponents", kind, id, typ)
				continue
			}
			if !built[mod] {
				t.Errorf("%s %s: %s is not in builder.yaml", kind, id, mod)
			}
		}
	}
	exporters := map[string]any{}
	for id := range gw.Exporters {
		exporters[id] = nil
	}
	check("receiver", gw.Receivers)
	check("processor", gw.Processors)
	check("exporter", exporters)
	check("extension", gw.Extensions)
	for _, f := range []string{"compose/single/compose.yaml", "compose/cluster/compose.yaml"} {
		var c compose
		strictYAML(t, f, &c)
		s, ok := c.Services["otelcol"]
		if !ok {
			t.Errorf("%s: no otelcol service", f)
			continue
		}
		if want := "otel/opentelemetry-collector-contrib:" + bm.Dist.Version; s.Image != want {
			t.Errorf("%s: otelcol image %s, want %s (builder.yaml's version, which the gateway test runs)", f, s.Image, want)
		}
		if v, ok := s.Environment["MCPDRIFT_INGEST_TOKEN"]; !ok || !strings.Contains(v, "${MCPDRIFT_INGEST_TOKEN") {
			t.Errorf("%s: otelcol does not pass MCPDRIFT_INGEST_TOKEN on (%q)", f, v)
		}
	}

	var ds struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name      string         `yaml:"name"`
			UID       string         `yaml:"uid"`
			Type      string         `yaml:"type"`
			Access    string         `yaml:"access"`
			URL       string         `yaml:"url"`
			IsDefault bool           `yaml:"isDefault"`
			Editable  bool           `yaml:"editable"`
			JSONData  map[string]any `yaml:"jsonData"`
			Secure    map[string]any `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	strictYAML(t, "compose/single/grafana/provisioning/datasources/mcpdrift.yaml", &ds)
	pluginID := grafanaPluginID(t)
	if ds.APIVersion != 1 || len(ds.Datasources) != 1 || ds.Datasources[0].Type != pluginID {
		t.Errorf("data source provisioning = %+v, want one data source of type %s (grafana-plugin/src/plugin.json)", ds, pluginID)
	}
	var db struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name            string         `yaml:"name"`
			Folder          string         `yaml:"folder"`
			Type            string         `yaml:"type"`
			DisableDeletion bool           `yaml:"disableDeletion"`
			Options         map[string]any `yaml:"options"`
		} `yaml:"providers"`
	}
	strictYAML(t, "compose/single/grafana/provisioning/dashboards/mcpdrift.yaml", &db)
	if db.APIVersion != 1 || len(db.Providers) != 1 || db.Providers[0].Type != "file" {
		t.Errorf("dashboard provisioning = %+v", db)
	}
	if path, _ := db.Providers[0].Options["path"].(string); !strings.Contains(path, "/plugins/"+pluginID+"/") {
		t.Errorf("dashboards are read from %q, not from the plugin %s", path, pluginID)
	}
	for _, f := range []string{"compose/single/compose.yaml", "compose/cluster/compose.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS: "+pluginID) ||
			!strings.Contains(string(data), ":/var/lib/grafana/plugins/"+pluginID+":ro") {
			t.Errorf("%s does not install and allow the plugin %s", f, pluginID)
		}
	}
}

// grafanaPluginID returns the id the Grafana plugin declares.
func grafanaPluginID(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../grafana-plugin/src/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &p); err != nil || p.ID == "" {
		t.Fatalf("grafana-plugin/src/plugin.json: id %q, %v", p.ID, err)
	}
	return p.ID
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^ARG (\w+)=(\S+)$`).FindAllStringSubmatch(string(data), -1) {
		args[m[1]] = m[2]
	}
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(string(data), -1) {
		img := m[1]
		if v, ok := args[strings.Trim(img, "${}")]; ok {
			img = v
		}
		if !strings.Contains(img, ":") || strings.HasSuffix(img, ":latest") {
			t.Errorf("base image %s is not pinned by a tag", img)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^COPY (?:--\S+ )?(\S+) `).FindAllStringSubmatch(string(data), -1) {
		if strings.HasPrefix(m[0], "COPY --from") || m[1] == "." {
			continue
		}
		if _, err := os.Stat(filepath.Join(repoRoot(t), m[1])); err != nil {
			t.Errorf("COPY %s: %v", m[1], err)
		}
	}
	for _, target := range []string{"ingest", "api", "mcpdrift"} {
		if !dockerfileHasTarget(t, "Dockerfile", target) {
			t.Errorf("no stage %s", target)
		}
	}
	if !regexp.MustCompile(`CGO_ENABLED=0 go build .* ./cmd/ingest`).Match(data) || !regexp.MustCompile(`CGO_ENABLED=0 go build .* ./cmd/api`).Match(data) {
		t.Error("ingest and api must build with CGO_ENABLED=0")
	}
}

// TestStaticBinaries checks that ingest and api do not link the embedded
// store (libchdb through purego), so that they build with CGO_ENABLED=0.
func TestStaticBinaries(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/ingest", "./cmd/api")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mcpdrift/mcpdrift/store/embedded" || dep == "github.com/ebitengine/purego" {
			t.Errorf("ingest or api depends on %s", dep)
		}
	}
}

// TestKubernetes decodes every manifest strictly into its API type (unknown
// fields fail) and cross-checks them.
func TestKubernetes(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	sort.Strings(files)
	var (
		deployments []appsv1.Deployment
		services    []corev1.Service
		pdbs        []policyv1.PodDisruptionBudget
		hpas        []autoscalingv2.HorizontalPodAutoscaler
		configMaps  = map[string]corev1.ConfigMap{}
		secrets     = map[string]corev1.Secret{}
	)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := sigsyaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s #%d: %v", f, i+1, err)
			}
			strict := func(v any) {
				if err := sigsyaml.UnmarshalStrict([]byte(doc), v); err != nil {
					t.Errorf("%s #%d (%s): %v", f, i+1, meta.Kind, err)
				}
			}
			switch meta.APIVersion + "/" + meta.Kind {
			case "apps/v1/Deployment":
				var d appsv1.Deployment
				strict(&d)
				deployments = append(deployments, d)
			case "v1/Service":
				var s corev1.Service
				strict(&s)
				services = append(services, s)
			case "policy/v1/PodDisruptionBudget":
				var p policyv1.PodDisruptionBudget
				strict(&p)
				pdbs = append(pdbs, p)
			case "autoscaling/v2/HorizontalPodAutoscaler":
				var h autoscalingv2.HorizontalPodAutoscaler
				strict(&h)
				hpas = append(hpas, h)
			case "v1/ConfigMap":
				var c corev1.ConfigMap
				strict(&c)
				configMaps[c.Name] = c
			case "v1/Secret":
				var s corev1.Secret
				strict(&s)
				secrets[s.Name] = s
			case "v1/Namespace":
				var n corev1.Namespace
				strict(&n)
			case "monitoring.coreos.com/v1/PrometheusRule":
				// Its groups are those of prometheus/rules.yaml:
				// TestPrometheusRuleMatches.
				var r prometheusRule
				strict(&r)
			default:
				t.Errorf("%s #%d: unexpected kind %s %s", f, i+1, meta.APIVersion, meta.Kind)
			}
		}
	}
	if len(deployments) != 2 || len(services) != 2 || len(pdbs) != 2 || len(hpas) != 2 {
		t.Fatalf("want a Deployment, Service, PDB and HPA for ingest and api; got %d %d %d %d", len(deployments), len(services), len(pdbs), len(hpas))
	}
	byName := map[string]appsv1.Deployment{}
	for _, d := range deployments {
		byName[d.Name] = d
		checkDeployment(t, d, configMaps, secrets)
	}
	matches := func(sel map[string]string, d appsv1.Deployment) bool {
		for k, v := range sel {
			if d.Spec.Template.Labels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	for _, s := range services {
		d, ok := byName[s.Name]
		if !ok || !matches(s.Spec.Selector, d) {
			t.Errorf("service %s selects no deployment", s.Name)
			continue
		}
		for _, p := range s.Spec.Ports {
			if !hasPort(d, p.TargetPort.StrVal) {
				t.Errorf("service %s: target port %s is not a container port", s.Name, p.TargetPort.String())
			}
		}
	}
	for _, p := range pdbs {
		d, ok := byName[p.Name]
		if !ok || p.Spec.Selector == nil || !matches(p.Spec.Selector.MatchLabels, d) {
			t.Errorf("pod disruption budget %s selects no deployment", p.Name)
		}
		if p.Spec.MinAvailable == nil || d.Spec.Replicas == nil || p.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
			t.Errorf("pod disruption budget %s would block every eviction", p.Name)
		}
	}
	for _, h := range hpas {
		if _, ok := byName[h.Spec.ScaleTargetRef.Name]; !ok || h.Spec.ScaleTargetRef.Kind != "Deployment" {
			t.Errorf("HPA %s targets %v", h.Name, h.Spec.ScaleTargetRef)
		}
		if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
			t.Errorf("HPA %s does not scale on CPU", h.Name)
		}
	}
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func hasPort(d appsv1.Deployment, name string) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func checkDeployment(t *testing.T, d appsv1.Deployment, cms map[string]corev1.ConfigMap, secrets map[string]corev1.Secret) {
	t.Helper()
	if d.Spec.Selector == nil {
		t.Fatalf("%s: no selector", d.Name)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pod template", d.Name, k, v)
		}
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if !pinnedImageRE.MatchString(c.Image) || strings.HasSuffix(c.Image, ":latest") {
			t.Errorf("%s: image %q is not pinned by a tag", d.Name, c.Image)
		}
		for probe, want := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/healthz"} {
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || !hasPort(d, probe.HTTPGet.Port.StrVal) {
				t.Errorf("%s: want an HTTP probe on %s at a named container port", d.Name, want)
			}
		}
		if c.Resources.Requests.Cpu().IsZero() {
			t.Errorf("%s: no CPU request: the HPA cannot compute utilisation", d.Name)
		}
		env := map[string]string{}
		for _, ef := range c.EnvFrom {
			switch {
			case ef.ConfigMapRef != nil:
				cm, ok := cms[ef.ConfigMapRef.Name]
				if !ok {
					t.Errorf("%s: unknown ConfigMap %s", d.Name, ef.ConfigMapRef.Name)
				}
				for k, v := range cm.Data {
					env[k] = v
				}
			case ef.SecretRef != nil:
				s, ok := secrets[ef.SecretRef.Name]
				if !ok {
					t.Errorf("%s: unknown Secret %s", d.Name, ef.SecretRef.Name)
				}
				for k, v := range s.StringData {
					env[k] = v
				}
			}
		}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		bin := strings.Split(strings.TrimPrefix(c.Image, "mcpdrift/"), ":")[0]
		runConfigCheck(t, d.Name, bin, c.Args, env)
	}
}
