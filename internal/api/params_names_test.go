package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/api"
)

// TestParamNamesFromAPIv1 checks that the query parameters the OpenAPI
// document declares are exactly the constants of apiv1/params.go, the
// names the CLI and the Grafana plugin send: a parameter named in the
// server alone, or a constant no endpoint reads, fails.
func TestParamNamesFromAPIv1(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../apiv1/params.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			consts = append(consts, s)
		}
		return true
	})
	var declared []string
	for _, p := range api.OpenAPI("test")["components"].(map[string]any)["parameters"].(map[string]any) {
		p := p.(map[string]any)
		if p["in"] == "query" {
			declared = append(declared, p["name"].(string))
		}
	}
	slices.Sort(consts)
	slices.Sort(declared)
	if len(declared) == 0 || !slices.Equal(consts, declared) {
		t.Errorf("query parameters of the OpenAPI document %q, want apiv1's %q", declared, consts)
	}
}
