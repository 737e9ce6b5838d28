package deploy_test

import (
	"flag"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite kubernetes/prometheusrule.yaml from prometheus/rules.yaml")

// promtool returns the path of promtool: $PROMTOOL, or where
// scripts/install-promtool.sh installs it. Without it the test is skipped,
// or fails when MCPDRIFT_REQUIRE_PROMTOOL is set (make test sets it, after
// installing promtool).
func promtool(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/install-promtool.sh", "--path").Output()
	if err != nil {
		t.Fatalf("scripts/install-promtool.sh --path: %v", err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_PROMTOOL") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_PROMTOOL is set and promtool is missing: %v; run scripts/install-promtool.sh", err)
		}
		t.Skipf("promtool is not installed (%v): run scripts/install-promtool.sh, or set PROMTOOL", err)
	}
	return path
}

// ruleFile is a Prometheus rule file, as far as the tests read it.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestPrometheusRules checks the alert rules with promtool — valid, and
// each alert firing on its failure and quiet otherwise in rules_test.yaml —
// and the compose files' Prometheus configs.
func TestPrometheusRules(t *testing.T) {
	var rules ruleFile
	strictYAML(t, "prometheus/rules.yaml", &rules)
	var tests struct {
		RuleFiles          []string `yaml:"rule_files"`
		EvaluationInterval string   `yaml:"evaluation_interval"`
		Tests              []struct {
			Name          string           `yaml:"name"`
			Interval      string           `yaml:"interval"`
			InputSeries   []map[string]any `yaml:"input_series"`
			AlertRuleTest []struct {
				EvalTime  string           `yaml:"eval_time"`
				AlertName string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	strictYAML(t, "prometheus/rules_test.yaml", &tests)
	// Every alert is tested both firing and quiet.
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.AlertName] = true
			} else {
				quiet[a.AlertName] = true
			}
		}
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alert %s: tested firing %v, quiet %v in rules_test.yaml; want both", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: no severity, summary or description", r.Alert)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alerts in prometheus/rules.yaml")
	}

	tool := promtool(t)
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(tool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("prometheus", "check", "rules", "rules.yaml")
	run("prometheus", "test", "rules", "rules_test.yaml")
	for _, dir := range []string{"compose/single/prometheus", "compose/cluster/prometheus"} {
		// The rule file's path is the one mounted in the container.
		run(dir, "check", "config", "--syntax-only", "prometheus.yaml")
	}
}

// prometheusRule is the Prometheus Operator's PrometheusRule, as far as
// the tests read it.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []any `json:"groups"`
	} `json:"spec"`
}

const prometheusRulePath = "kubernetes/prometheusrule.yaml"

// prometheusRuleHeader opens kubernetes/prometheusrule.yaml; its spec is
// the groups of prometheus/rules.yaml.
const prometheusRuleHeader = `# The alert rules of deploy/prometheus/rules.yaml for the Prometheus
# Operator. Generated: go test ./deploy -run TestPrometheusRuleMatches -update
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: mcpdrift
  namespace: mcpdrift
  labels:
    app.kubernetes.io/part-of: mcpdrift
spec:
`

// TestPrometheusRuleMatches checks that the Kubernetes PrometheusRule holds
// the groups of prometheus/rules.yaml, or writes it under -update.
func TestPrometheusRuleMatches(t *testing.T) {
	src, err := os.ReadFile("prometheus/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	start := slices.Index(lines, "groups:\n")
	if start < 0 {
		t.Fatal("prometheus/rules.yaml: no groups: line")
	}
	if *update {
		var b strings.Builder
		b.WriteString(prometheusRuleHeader)
		for _, l := range lines[start:] {
			if strings.TrimSpace(l) == "" {
				b.WriteString(l)
				continue
			}
			b.WriteString("  " + l)
		}
		if err := os.WriteFile(prometheusRulePath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(prometheusRulePath)
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := sigsyaml.UnmarshalStrict(data, &pr); err != nil {
		t.Fatalf("%s: %v", prometheusRulePath, err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Namespace != "mcpdrift" {
		t.Errorf("%s: %s %s in %q", prometheusRulePath, pr.APIVersion, pr.Kind, pr.Metadata.Namespace)
	}
	var want struct {
		Groups []any `yaml:"groups"`
	}
	if err := yaml.Unmarshal(src, &want); err != nil {
		t.Fatal(err)
	}
	// Both through JSON, so that the two decoders' types agree.
	got, err := sigsyaml.Marshal(pr.Spec.Groups)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := sigsyaml.Marshal(want.Groups)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(yamlValue(t, got), yamlValue(t, wantJSON)) {
		t.Errorf("%s does not hold the groups of prometheus/rules.yaml; run go test ./deploy -run TestPrometheusRuleMatches -update", prometheusRulePath)
	}
}

// yamlValue decodes b into generic values.
func yamlValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := sigsyaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
