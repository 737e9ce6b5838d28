package dashboards_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/dashboards"
	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
)

var update = flag.Bool("update", false, "regenerate src/dashboards from code")

var dir = filepath.Join("..", "..", "src", "dashboards")

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// TestGenerated keeps src/dashboards equal to what the code generates.
func TestGenerated(t *testing.T) {
	for _, d := range dashboards.All() {
		got, err := encode(d.Model)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, d.File)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./pkg/dashboards -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what pkg/dashboards generates: go test ./pkg/dashboards -update regenerates it", d.File)
		}
	}
}

// panelJSON is what the lint reads of a panel.
type panelJSON struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Datasource  *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []json.RawMessage `json:"targets"`
	Panels  []panelJSON       `json:"panels"`
}

type dashboardJSON struct {
	UID        string      `json:"uid"`
	Title      string      `json:"title"`
	Panels     []panelJSON `json:"panels"`
	Templating struct {
		List []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Query      json.RawMessage `json:"query"`
			Datasource *struct {
				Type string `json:"type"`
				UID  string `json:"uid"`
			} `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

// TestLint reads the shipped dashboard files (whatever wrote them) and
// checks that every panel reads the data source variable, has a title, a
// description and a unit, and that every query is one the backend runs.
func TestLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards under %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var d dashboardJSON
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			if d.UID == "" || d.Title == "" {
				t.Error("dashboard without uid or title")
			}
			vars := map[string]bool{}
			// The queries are validated as a dashboard runs them: with
			// each variable replaced by its default (a query variable's
			// All, a text box's text).
			var defaults []string
			for _, v := range d.Templating.List {
				vars[v.Name] = true
				def := "*"
				if v.Type == "textbox" {
					_ = json.Unmarshal(v.Query, &def)
				}
				defaults = append(defaults, "${"+v.Name+"}", def, "$"+v.Name, def)
				switch v.Type {
				case "datasource":
					if string(v.Query) != fmt.Sprintf("%q", plugin.ID) {
						t.Errorf("variable %s lists data sources of type %s, want %s", v.Name, v.Query, plugin.ID)
					}
				case "query":
					if v.Datasource == nil || v.Datasource.UID != "${datasource}" || v.Datasource.Type != plugin.ID {
						t.Errorf("variable %s does not read the data source variable", v.Name)
					}
					if err := plugin.ValidateQuery(plugin.QueryTypeVariable, v.Query); err != nil {
						t.Errorf("variable %s: %v", v.Name, err)
					}
				}
			}
			for _, want := range []string{"datasource", "tool", "service", "environment"} {
				if !vars[want] {
					t.Errorf("no %s template variable", want)
				}
			}
			interpolate := strings.NewReplacer(defaults...)
			var walk func(ps []panelJSON)
			walk = func(ps []panelJSON) {
				for _, p := range ps {
					if p.Type == "row" {
						walk(p.Panels)
						continue
					}
					name := fmt.Sprintf("panel %d %q", p.ID, p.Title)
					if strings.TrimSpace(p.Title) == "" {
						t.Errorf("%s has no title", name)
					}
					if strings.TrimSpace(p.Description) == "" {
						t.Errorf("%s has no description", name)
					}
					if p.FieldConfig.Defaults.Unit == "" {
						t.Errorf("%s has no unit", name)
					}
					if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Datasource.Type != plugin.ID {
						t.Errorf("%s does not read the data source variable: %+v", name, p.Datasource)
					}
					if len(p.Targets) == 0 {
						t.Errorf("%s has no query", name)
					}
					for _, raw := range p.Targets {
						var tg struct {
							QueryType  string `json:"queryType"`
							Datasource *struct {
								Type string `json:"type"`
								UID  string `json:"uid"`
							} `json:"datasource"`
						}
						if err := json.Unmarshal(raw, &tg); err != nil {
							t.Fatal(err)
						}
						if !slices.Contains(plugin.QueryTypes(), tg.QueryType) {
							t.Errorf("%s: unknown query type %q", name, tg.QueryType)
						}
						if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
							t.Errorf("%s: a query does not read the data source variable", name)
						}
						if err := plugin.ValidateQuery(tg.QueryType, json.RawMessage(interpolate.Replace(string(raw)))); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}
				}
			}
			walk(d.Panels)
		})
	}
}

// TestIncludes checks that plugin.json lists exactly the shipped
// dashboards.
func TestIncludes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "src", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		ID       string `json:"id"`
		Backend  bool   `json:"backend"`
		Alerting bool   `json:"alerting"`
		Exec     string `json:"executable"`
		Includes []struct {
			Type string `json:"type"`
			Path string `json:"path"`
		} `json:"includes"`
		Dependencies struct {
			GrafanaDependency string `json:"grafanaDependency"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		t.Fatal(err)
	}
	if pj.ID != plugin.ID || !pj.Backend || !pj.Alerting || pj.Exec != "gpx_mcpdrift" || pj.Dependencies.GrafanaDependency == "" {
		t.Errorf("plugin.json: id %q backend %v alerting %v executable %q grafanaDependency %q", pj.ID, pj.Backend, pj.Alerting, pj.Exec, pj.Dependencies.GrafanaDependency)
	}
	var listed []string
	for _, in := range pj.Includes {
		if in.Type == "dashboard" {
			listed = append(listed, filepath.Base(in.Path))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var shipped []string
	for _, f := range files {
		shipped = append(shipped, filepath.Base(f))
	}
	slices.Sort(listed)
	if !slices.Equal(listed, shipped) {
		t.Errorf("plugin.json includes %v, src/dashboards has %v", listed, shipped)
	}
}
