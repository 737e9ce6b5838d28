package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

const docURL = "https://mcpdrift.invalid/openapi.json"

// pointer escapes s as one JSON pointer token.
func pointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// openAPI fetches the served document and returns it decoded and a
// compiler that holds it, asserting formats.
func openAPI(t *testing.T, h http.Handler) (map[string]any, *jsonschema.Compiler) {
	t.Helper()
	r := get(t, h, "/api/v1/openapi.json", "")
	if r.status != http.StatusOK {
		t.Fatalf("openapi.json: %d %s", r.status, r.body)
	}
	golden(t, "openapi.json", r.body)
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, inst); err != nil {
		t.Fatal(err)
	}
	return doc, c
}

// validate checks body against the schema at the JSON pointer ptr of the
// document.
func validate(t *testing.T, c *jsonschema.Compiler, ptr string, body []byte) {
	t.Helper()
	sch, err := c.Compile(docURL + "#" + ptr)
	if err != nil {
		t.Fatalf("cannot compile %s: %v", ptr, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("answer does not match %s: %v\n%s", ptr, err, body)
	}
}

// TestOpenAPIMatchesResponses validates every endpoint's 200 answer, and a
// 400 problem from each, against the schemas the document declares for
// them, and checks that the document lists every route with every media
// type it serves.
func TestOpenAPIMatchesResponses(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	doc, c := openAPI(t, s.Handler())
	paths := doc["paths"].(map[string]any)

	// Requests that exercise each endpoint with its parameters, including
	// answers with nulls (pointers) and the next cursor.
	ok := map[string][]string{
		"/api/v1/tools":                      {"", "?tool=deploy_preview&exclude_client=ci-runner&exclude_client=cursor"},
		"/api/v1/reports/stale-usage":        {"", "?environment=prod&client=cursor"},
		"/api/v1/reports/rejections":         {"", "?service=tracker"},
		"/api/v1/reports/repairs":            {""},
		"/api/v1/reports/adapter-retirement": {"", "?window=14d&max_calls=5&max_share=1%25&long_session=3d&top_clients=1&adapter=delete_branch/3-4"},
		"/api/v1/reports/propagation":        {"", "?from=2099-03-15T00:00:00Z&to=2099-03-16T00:00:00Z"},
		"/api/v1/reports/violations":         {"", "?limit=2"},
		"/api/v1/reports/revision-sources":   {"", "?client=cline&from=2099-03-16T06:00:00Z"},
		"/api/v1/reports/contract-errors":    {"", "?tool=list_projects", "?from=2099-03-16T09:00:00Z&to=2099-03-16T09:02:30Z"},
		"/api/v1/audit/calls":                {"", "?limit=1&session=cd09-st-4", "?run=legacy-run-1&request_id=acme-req-42"},
		"/healthz":                           {""},
		"/readyz":                            {""},
		"/api/v1/openapi.json":               {""},
	}
	for path, queries := range ok {
		op, found := paths[path].(map[string]any)
		if !found {
			t.Errorf("the document has no path %s", path)
			continue
		}
		get := op["get"].(map[string]any)
		for _, q := range queries {
			r := getRaw(t, s.Handler(), path+q)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s%s: %d %s", path, q, r.status, r.body)
			}
			validate(t, c, "/paths/"+pointer(path)+"/get/responses/200/content/application~1json/schema", r.body)
		}
		if !strings.HasPrefix(path, "/api/v1/") || path == "/api/v1/openapi.json" {
			continue
		}
		// The problem of a bad parameter, as the 400 response declares it.
		r := getRaw(t, s.Handler(), path+"?from=never")
		checkProblem(t, r, http.StatusBadRequest)
		resp := get["responses"].(map[string]any)["400"].(map[string]any)
		ref := strings.TrimPrefix(resp["$ref"].(string), "#")
		validate(t, c, ref+"/content/application~1problem+json/schema", r.body)
		content := get["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)
		for _, mt := range []string{"application/json", "text/csv", "text/markdown", "text/plain"} {
			if content[mt] == nil {
				t.Errorf("%s: the 200 answer does not list %s", path, mt)
			}
		}
		// Every parameter the endpoint takes is declared: an undeclared
		// one is refused, so a request with all declared ones must pass
		// the parameter check.
		var names []string
		for _, p := range get["parameters"].([]any) {
			ref := p.(map[string]any)["$ref"].(string)
			names = append(names, strings.TrimPrefix(ref, "#/components/parameters/"))
		}
		if !slices.Contains(names, "format") || !slices.Contains(names, "from") {
			t.Errorf("%s: parameters %v", path, names)
		}
	}
	// And the 404 and 406 problems.
	validate(t, c, "/components/schemas/Problem", getRaw(t, s.Handler(), "/api/nowhere").body)
	validate(t, c, "/components/responses/NotAcceptable/content/application~1problem+json/schema",
		get(t, s.Handler(), "/api/v1/reports/repairs", "image/png").body)

	// The validator does reject what the document does not allow.
	sch, err := c.Compile(docURL + "#/components/schemas/AdapterRetirementReport")
	if err != nil {
		t.Fatal(err)
	}
	body := getRaw(t, s.Handler(), "/api/v1/reports/adapter-retirement").body
	for _, bad := range []struct{ from, to string }{
		{`"verdict":"blocked"`, `"verdict":"maybe"`},
		{`"callers":[`, `"callers":null,"x":[`},
		{`"last_seen":"2099-03-16T09:05:00Z"`, `"last_seen":"yesterday"`},
		{`"report":"adapter-retirement"`, `"report":"stale-usage"`},
		{`"thresholds":{`, `"extra":1,"thresholds":{`},
	} {
		tampered := strings.Replace(string(body), bad.from, bad.to, 1)
		if tampered == string(body) {
			t.Fatalf("%s is not in the answer", bad.from)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tampered))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("the schema accepts %s", bad.to)
		}
	}

	// Every route is documented, and every documented path is a route.
	routes := map[string]bool{}
	for _, rt := range s.Routes() {
		routes[rt] = true
		if rt == "/api/v1/reports/:report" || rt == "/api/v1/reports/:report/series" {
			continue // answers unknown reports with a 404
		}
		// gin's :tool is OpenAPI's {tool}.
		if paths[pathParams.ReplaceAllString(rt, "{$1}")] == nil {
			t.Errorf("route %s is not in the document", rt)
		}
	}
	for p := range paths {
		if !routes[strings.ReplaceAll(p, "{tool}", ":tool")] {
			t.Errorf("the document lists %s, which is no route", p)
		}
	}
}

// pathParams matches gin's path parameters.
var pathParams = regexp.MustCompile(`:([a-z_]+)`)

// TestOpenAPIParametersComplete sends each endpoint every parameter its
// operation declares, each with its example or a valid value, and expects
// a 200: the handlers and the document agree on the parameters.
func TestOpenAPIParametersComplete(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	doc, _ := openAPI(t, s.Handler())
	params := doc["components"].(map[string]any)["parameters"].(map[string]any)
	valid := map[string]string{
		"from": "-7d", "to": "now", "tool": "deploy_preview", "service": "deployer", "environment": "prod",
		"client": "cursor", "exclude_client": "ci-runner", "format": "json", "width": "120", "limit": "10", "cursor": "",
		"window": "14d", "max_calls": "5", "max_share": "0.5%", "long_session": "24h", "adapter": "deploy_preview/1-2",
		"top_clients": "3", "unknown_callers": "safe", "run": "legacy-run-1", "session": "s1", "request_id": "acme-req-42",
		"step": "1h", "group_by": "tool", "old": "1", "new": "2", "tool_path": "deploy_preview",
	}
	for path, item := range doc["paths"].(map[string]any) {
		op, isGet := item.(map[string]any)["get"].(map[string]any)
		if !isGet {
			continue // POST /api/v1/check: TestCheckWeighed sends its parameters
		}
		list, _ := op["parameters"].([]any)
		var q []string
		target := path
		for _, p := range list {
			name := strings.TrimPrefix(p.(map[string]any)["$ref"].(string), "#/components/parameters/")
			if params[name] == nil {
				t.Errorf("%s: parameter %s is not in components", path, name)
			}
			v, ok := valid[name]
			if !ok {
				t.Errorf("%s: parameter %s has no test value", path, name)
			}
			if name == "window" {
				continue // an alternative to from
			}
			if name == "tool_path" {
				target = strings.ReplaceAll(target, "{tool}", v)
				continue
			}
			if v != "" {
				q = append(q, name+"="+strings.ReplaceAll(v, "%", "%25"))
			}
		}
		if len(q) > 0 {
			target += "?" + strings.Join(q, "&")
		}
		if r := getRaw(t, s.Handler(), target); r.status != http.StatusOK {
			t.Errorf("GET %s: %d %s", target, r.status, r.body)
		}
	}
}

// TestOpenAPIRefs resolves every $ref of the document.
func TestOpenAPIRefs(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	doc, _ := openAPI(t, s.Handler())
	var walk func(v any)
	ids := map[string]bool{}
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if resolve(doc, ref) == nil {
					t.Errorf("$ref %s resolves to nothing", ref)
				}
			}
			if id, ok := v["operationId"].(string); ok {
				if ids[id] {
					t.Errorf("operationId %s twice", id)
				}
				ids[id] = true
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", doc["openapi"])
	}
}

func resolve(doc map[string]any, ref string) any {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

// getRaw requests target without an Accept header.
func getRaw(t *testing.T, h http.Handler, target string) response {
	t.Helper()
	return get(t, h, target, "")
}
