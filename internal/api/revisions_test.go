package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// TestRevisions reads the fixture's registry: deployer-0 advertised
// deploy_preview 1 from Now-10d (and at its restart, Now-9d) to Now-8d+10m,
// deployer-1 revision 2 from Now-8d to Now-5m.
func TestRevisions(t *testing.T) {
	s, fx := newServer(t, reporttest.TenantA)
	r := get(t, s.Handler(), "/api/v1/tools/deploy_preview/revisions", "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	golden(t, "revisions_deploy_preview.json", r.body)
	var body apiv1.RevisionsBody
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Histories) != 1 || len(body.Histories[0].Revisions) != 2 {
		t.Fatalf("histories %+v, want one of two revisions", body.Histories)
	}
	one, two := body.Histories[0].Revisions[0], body.Histories[0].Revisions[1]
	if !one.FirstAdvertised.Equal(fx.Now.AddDate(0, 0, -10)) || one.Advertisements != 3 || one.Instances != 1 || one.OverlapS != nil || one.Change != nil {
		t.Errorf("revision 1: %+v", one)
	}
	if two.Previous != "1" || two.OverlapS == nil || *two.OverlapS != 600 || two.Instances != 1 || two.Advertisements != 2 {
		t.Errorf("revision 2: %+v, want 600 s of overlap with 1", two)
	}
	if two.Change == nil || two.Change.Class == "" || two.Change.Summary == "" {
		t.Errorf("revision 2's change: %+v", two.Change)
	}

	// A service filter that matches nothing answers no history.
	if r := get(t, s.Handler(), "/api/v1/tools/deploy_preview/revisions?service=docs", ""); r.status != http.StatusOK || !strings.Contains(string(r.body), `"histories":[]`) {
		t.Errorf("service=docs: %d %s", r.status, r.body)
	}
}

// TestRevisionsDiff compares deploy_preview 1 and 2, and refuses an
// unknown revision or a missing one.
func TestRevisionsDiff(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	r := get(t, s.Handler(), "/api/v1/tools/deploy_preview/diff?old=1&new=2", "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	golden(t, "diff_deploy_preview_1_2.json", r.body)
	var d registry.Diff
	if err := json.Unmarshal(r.body, &d); err != nil {
		t.Fatal(err)
	}
	if d.OldArguments == nil || !strings.Contains(d.SchemaDiff, `+    "additionalProperties": false,`) {
		t.Errorf("diff %+v", d)
	}
	for _, c := range []struct {
		target string
		status int
		want   string
	}{
		{"/api/v1/tools/deploy_preview/diff?old=1&new=9", 404, `unknown revision \"9\"`},
		{"/api/v1/tools/deploy_preview/diff?old=1", 400, "required"},
		{"/api/v1/tools/deploy_preview/diff?old=1&new=2&from=-1d", 400, "unknown parameter"},
	} {
		if r := get(t, s.Handler(), c.target, ""); r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s, want %d and %q", c.target, r.status, r.body, c.status, c.want)
		}
	}
}

// TestRegistryTenancy asks tenant B for what only tenant A advertised.
func TestRegistryTenancy(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantB)
	if r := get(t, s.Handler(), "/api/v1/tools/deploy_preview/revisions", ""); r.status != http.StatusOK || !strings.Contains(string(r.body), `"histories":[]`) {
		t.Errorf("tenant B sees: %d %s", r.status, r.body)
	}
	if r := get(t, s.Handler(), "/api/v1/tools/deploy_preview/diff?old=1&new=2", ""); r.status != http.StatusNotFound {
		t.Errorf("tenant B's diff: %d %s", r.status, r.body)
	}
	if r := get(t, s.Handler(), "/api/v1/deployed?service=deployer", ""); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "advertised no tool definition") {
		t.Errorf("tenant B's deployed list: %d %s", r.status, r.body)
	}
}

// TestCheckDeployed checks examples/tools-list/new.json against what the
// deployer advertises now (deploy_preview 2, delete_branch 4).
func TestCheckDeployed(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	var req apiv1.CheckRequest
	req.New = json.RawMessage(readFile(t, "../../examples/tools-list/new.json"))
	b, _ := json.Marshal(req)
	r := post(t, s.Handler(), "/api/v1/check?service=deployer", b)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	golden(t, "check_deployed.json", r.body)
	body := decodeCheck(t, r)
	if body.Deployed == nil || body.Deployed.Environment != "prod" || len(body.Deployed.MidDeploy) != 0 {
		t.Errorf("deployed %+v", body.Deployed)
	}
	for _, c := range body.Tools {
		if c.Tool == "deploy_preview" && c.OldRevision != "2" {
			t.Errorf("deploy_preview's old revision %q, want 2 (advertised now)", c.OldRevision)
		}
	}
	// The Markdown is mcpdrift check -deployed's: where the old list
	// came from, then the check.
	var want bytes.Buffer
	if err := body.Deployed.WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	if err := body.Report().Markdown(&want); err != nil {
		t.Fatal(err)
	}
	req2 := httptest.NewRequest(http.MethodPost, "/api/v1/check?service=deployer", bytes.NewReader(b))
	req2.Header.Set("Accept", "text/markdown")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req2)
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want.Bytes()) || !strings.HasPrefix(want.String(), "Old list: what `deployer` advertises now in `prod`") {
		t.Errorf("the Markdown: %d\n%s\nwant\n%s", rec.Code, rec.Body.Bytes(), want.Bytes())
	}
}

// TestDeployed lists what the deployer advertises now (deploy_preview 2,
// delete_branch 4: the old list TestCheckDeployed compares against), and
// refuses a request that names no service, or one that advertised
// nothing.
func TestDeployed(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	r := get(t, s.Handler(), "/api/v1/deployed?service=deployer", "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	golden(t, "deployed_deployer.json", r.body)
	_, c := openAPI(t, s.Handler())
	validate(t, c, "/paths/"+pointer(deployedPath)+"/get/responses/200/content/application~1json/schema", r.body)
	var d registry.Deployed
	if err := json.Unmarshal(r.body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Service != "deployer" || d.Environment != "prod" || len(d.MidDeploy) != 0 {
		t.Errorf("deployed %+v", d)
	}
	var list struct {
		Tools []struct {
			Name string            `json:"name"`
			Meta map[string]string `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(d.List, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name+"@"+tool.Meta["dev.mcpdrift/revision"])
	}
	if strings.Join(got, " ") != "delete_branch@4 deploy_preview@2" {
		t.Errorf("the list holds %v, want delete_branch@4 deploy_preview@2", got)
	}
	for _, c := range []struct {
		target, param, want string
	}{
		{"/api/v1/deployed", "service", "required"},
		{"/api/v1/deployed?service=nobody", "service", `service \"nobody\" has advertised no tool definition`},
		{"/api/v1/deployed?service=deployer&environment=staging", "service", `in environment \"staging\"`},
		{"/api/v1/deployed?service=deployer&from=-1d", "from", "unknown parameter"},
	} {
		r := get(t, s.Handler(), c.target, "")
		if p := checkProblem(t, r, http.StatusBadRequest); p.Parameter != c.param || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %s, want parameter %s and %q", c.target, r.body, c.param, c.want)
		}
	}
}

// TestDeployedServices lists the services the registry holds: the
// deployer in prod, advertising two tools now, none mid-deploy; the same
// figures as GET /api/v1/deployed. Tenant B's registry is empty, and a
// parameter is refused.
func TestDeployedServices(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	r := get(t, s.Handler(), servicesPath, "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	golden(t, "deployed_services.json", r.body)
	_, c := openAPI(t, s.Handler())
	validate(t, c, "/paths/"+pointer(servicesPath)+"/get/responses/200/content/application~1json/schema", r.body)
	var body apiclient.ServicesBody
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	var d registry.Deployed
	if err := json.Unmarshal(get(t, s.Handler(), deployedPath+"?service=deployer", "").body, &d); err != nil {
		t.Fatal(err)
	}
	if len(body.Services) != 1 {
		t.Fatalf("services %+v, want the deployer only", body.Services)
	}
	if got := body.Services[0]; got.Service != "deployer" || got.Environment != d.Environment || !got.At.Equal(d.At) || got.Tools != 2 || len(got.MidDeploy) != 0 {
		t.Errorf("service %+v; GET /api/v1/deployed says %s %s at %s, 2 tools", got, d.Service, d.Environment, d.At)
	}
	if r := get(t, s.Handler(), servicesPath+"?service=deployer", ""); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "unknown parameter") {
		t.Errorf("with a parameter: %d %s", r.status, r.body)
	}
	b, _ := newServer(t, reporttest.TenantB)
	if r := get(t, b.Handler(), servicesPath, ""); r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != `{"services":[]}` {
		t.Errorf("tenant B: %d %s, want no service", r.status, r.body)
	}
}

// TestDeployedScope: the list deployed now needs the read scope, as the
// release check that compares against it does.
func TestDeployedScope(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	hc := &http.Client{Timeout: time.Minute}
	for who, status := range map[string]int{"a": 200, "a-read": 200, "a-audit": 403, "a-ingest": 403, "": 401} {
		r := call(t, hc, "http://"+s.Addr(), "/api/v1/deployed?service=deployer", tk[who], nil)
		if r.status != status {
			t.Errorf("token %q: %d %s, want %d", who, r.status, r.body, status)
		}
	}
}

// TestRegistryScopes checks every registry endpoint of the OpenAPI
// document against each kind of token: a read token passes the check of
// its scope (whatever the answer then is), an audit-only or ingest-only
// token gets 403, no token 401.
func TestRegistryScopes(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	base := "http://" + s.Addr()
	hc := &http.Client{Timeout: time.Minute}
	var doc map[string]any
	if err := json.Unmarshal(call(t, hc, base, "/api/v1/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for path, item := range doc["paths"].(map[string]any) {
		op, isGet := item.(map[string]any)["get"].(map[string]any)
		if tags, _ := op["tags"].([]any); isGet && len(tags) > 0 && tags[0] == "registry" {
			paths = append(paths, strings.ReplaceAll(path, "{tool}", "deploy_preview"))
		}
	}
	sort.Strings(paths)
	if len(paths) < 3 {
		t.Fatalf("registry paths %v, want revisions, diff and deployed", paths)
	}
	for _, path := range paths {
		target := path + "?service=deployer&old=1&new=2"
		for _, who := range []string{"a", "a-read"} {
			if r := call(t, hc, base, target, tk[who], nil); r.status == 401 || r.status == 403 {
				t.Errorf("%s with token %q: %d %s, want the scope read to pass", path, who, r.status, r.body)
			}
		}
		for who, status := range map[string]int{"a-audit": 403, "a-ingest": 403, "": 401} {
			if r := call(t, hc, base, target, tk[who], nil); r.status != status {
				t.Errorf("%s with token %q: %d %s, want %d", path, who, r.status, r.body, status)
			}
		}
	}
}

// deployedPath is the endpoint of the list deployed now, servicesPath
// that of the services that have one.
const (
	deployedPath = "/api/v1/deployed"
	servicesPath = "/api/v1/deployed/services"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
