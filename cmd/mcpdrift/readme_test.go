package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestReadmeAsANewcomer follows README.md: it starts `mcpdrift serve` as a
// separate process, sends the README's example events the ways the README
// shows (curl, the SDK example, telemetrygen when installed), and reads them
// back through the API.
func TestReadmeAsANewcomer(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	readme := readFile(t, "../../README.md")
	for _, want := range []string{"make run", "make test", "--data @examples/call.json", "go run ./examples/sdk -endpoint 127.0.0.1:4317", "telemetrygen logs --otlp-insecure"} {
		if !strings.Contains(readme, want) {
			t.Fatalf("README.md no longer shows %q", want)
		}
	}

	bin := t.TempDir()
	build(t, filepath.Join(bin, "mcpdrift"), ".")
	build(t, filepath.Join(bin, "sdk-example"), "../../examples/sdk")
	dataDir := t.TempDir()

	srv := startServe(t, filepath.Join(bin, "mcpdrift"), dataDir)
	// The console, where the README sends a newcomer after make run.
	if !strings.Contains(readme, "open the console at http://127.0.0.1:8080/ in a browser") {
		t.Fatal("README.md no longer sends a newcomer to the console")
	}
	if resp, err := http.Get("http://" + srv.api + "/"); err != nil {
		t.Fatal(err)
	} else {
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `<script src="/assets/app.js" defer></script>`) {
			t.Fatalf("GET / on the API: %d %.300s", resp.StatusCode, page)
		}
	}

	// Every client below must finish well within this.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// curl, as the README shows it, from the repository root.
	if curl, err := exec.LookPath("curl"); err == nil {
		line := findLine(t, readme, "curl -s -H 'Content-Type: application/json' --data @examples/call.json")
		line = strings.Replace(line, "127.0.0.1:4318", srv.http, 1)
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(curl)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "partialSuccess") {
			t.Fatalf("README curl: %v: %s", err, out)
		}
	} else {
		t.Log("curl not installed: README curl line not exercised")
	}

	// The SDK example.
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "sdk-example"), "-endpoint", srv.grpc).CombinedOutput(); err != nil {
		t.Fatalf("sdk example: %v: %s", err, out)
	}

	wantDeploy := 2
	if tg := lookTelemetrygen(); tg != "" {
		args := telemetrygenArgs(t, readme)
		args = append(args, "--otlp-endpoint", srv.grpc)
		if out, err := exec.CommandContext(ctx, tg, args...).CombinedOutput(); err != nil {
			t.Fatalf("telemetrygen: %v: %s", err, out)
		}
		wantDeploy += 1000
	} else {
		t.Log("telemetrygen not installed: README telemetrygen line not exercised")
	}

	// Reports trail acknowledgements by up to -ingest.insert.max-delay
	// (1 s), as the README says.
	waitStored(t, srv.api)
	var got struct {
		Rows []struct {
			Tool     string   `json:"tool"`
			Calls    int      `json:"calls"`
			Adapters []string `json:"adapters"`
		} `json:"rows"`
	}
	getJSON(t, "http://"+srv.api+"/api/v1/tools?from=-7d", &got)
	calls := map[string]int{}
	for _, tl := range got.Rows {
		calls[tl.Tool] = tl.Calls
		if tl.Tool == "deploy_preview" && (len(tl.Adapters) != 1 || tl.Adapters[0] != "deploy_preview-r1-r2") {
			t.Errorf("deploy_preview adapters = %v", tl.Adapters)
		}
	}
	if calls["deploy_preview"] != wantDeploy || calls["run_report"] != 1 {
		t.Fatalf("tools report = %+v, want deploy_preview %d calls and run_report 1", got.Rows, wantDeploy)
	}

	checkSelfObservability(t, srv.api)
	readmeGate(ctx, t, readme, filepath.Join(bin, "mcpdrift"), srv.api)

	// A second process on the same data directory is refused clearly.
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "mcpdrift"), "serve", "-data.dir", dataDir,
		"-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0", "-api.listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "data directory in use") {
		t.Fatalf("second serve on the same dir: %v: %s", err, out)
	}

	srv.stop(t)
	out, err = exec.CommandContext(ctx, filepath.Join(bin, "mcpdrift"), "migrate", "-data.dir", dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "up to date") {
		t.Fatalf("migrate after serve: %v: %s", err, out)
	}
}

// readmeGate runs the README's gate example against the API at api: its
// adapter is the one the curl step's events name, and the gate decides
// (exit 0 or 1) rather than failing to find it (exit 2).
func readmeGate(ctx context.Context, t *testing.T, readme, bin, api string) {
	t.Helper()
	line := findLine(t, readme, "bin/mcpdrift gate adapter ")
	args := strings.Fields(strings.TrimPrefix(line, "bin/mcpdrift "))
	id := args[2]
	var sent struct {
		ResourceLogs []struct {
			ScopeLogs []struct {
				LogRecords []struct {
					Attributes []struct {
						Key   string `json:"key"`
						Value struct {
							StringValue string `json:"stringValue"`
						} `json:"value"`
					} `json:"attributes"`
				} `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "../../examples/call.json")), &sent); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, rl := range sent.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				for _, a := range lr.Attributes {
					if a.Key == otelschema.AttrAdapterID {
						ids = append(ids, a.Value.StringValue)
					}
				}
			}
		}
	}
	if !slices.Contains(ids, id) || strings.Index(readme, id) > strings.Index(readme, line) {
		t.Fatalf("README gate example gates %q, but the curl step's examples/call.json names adapters %v", id, ids)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "-api", "http://"+api)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if (code != 0 && code != 1) || !strings.Contains(stdout.String(), "**Verdict: `") || !strings.Contains(stdout.String(), id) {
		t.Fatalf("README gate example: %v, exit %d: %s%s", err, code, stdout.String(), stderr.String())
	}
}

type serveProc struct {
	cmd             *exec.Cmd
	grpc, http, api string
	done            chan error
}

// startServe starts `bin serve` on dataDir, listening on loopback ports
// it prints, with the extra flags.
func startServe(t *testing.T, bin, dataDir string, extra ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "-data.dir", dataDir,
		"-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0", "-api.listen", "127.0.0.1:0"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	// A test binary killed by its -timeout runs no cleanup: the child must
	// not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan error, 1)}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	addr := regexp.MustCompile(`(\d+\.\d+\.\d+\.\d+:\d+)`)
	deadline := time.After(60 * time.Second)
	for p.api == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before it was ready: %v", <-p.done)
			}
			m := addr.FindString(l)
			switch {
			case strings.Contains(l, "OTLP/gRPC"):
				p.grpc = m
			case strings.Contains(l, "OTLP/HTTP"):
				p.http = m
			case strings.Contains(l, "API"):
				p.api = m
			}
		case <-deadline:
			t.Fatal("serve did not print its addresses within 60s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p
}

func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop within 60s of SIGTERM")
	}
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v: %s", pkg, err, b)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// findLine returns the README line that starts with prefix.
func findLine(t *testing.T, text, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("README has no line starting %q", prefix)
	return ""
}

// telemetrygenArgs returns the README's telemetrygen command line, joined
// across its continuation lines and unquoted as a shell would.
func telemetrygenArgs(t *testing.T, readme string) []string {
	t.Helper()
	i := strings.Index(readme, "telemetrygen logs --otlp-insecure")
	end := strings.Index(readme[i:], "\n```")
	cmdline := strings.ReplaceAll(readme[i:i+end], "\\\n", " ")
	var args []string
	for _, f := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(cmdline, -1) {
		args = append(args, strings.Trim(f, "'"))
	}
	return args[1:]
}

func lookTelemetrygen() string {
	if p, err := exec.LookPath("telemetrygen"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "telemetrygen")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func getJSON(t *testing.T, url string, dest any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, dest); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

// TestReadmeDrifttest runs the README's drift-test lines: the example
// server started as the README starts it (built, on a free loopback port
// instead of 3001), the HTTP line passing with exit 0, and the stdio line,
// whose server lacks an adapter, failing with exit 1; then the serve line,
// whose drift test endpoint plans the same calls.
func TestReadmeDrifttest(t *testing.T) {
	readme := readFile(t, "../../README.md")
	start := strings.Index(readme, "## Send old calls to a test server before the deploy")
	if start < 0 {
		t.Fatal("README.md has no section on the drift test")
	}
	end := strings.Index(readme[start+3:], "\n## ")
	section := readme[start : start+3+end]
	server := filepath.Join(t.TempDir(), "driftserver")
	build(t, server, "../../examples/driftserver")

	serveLine := findLine(t, section, "go run ./examples/driftserver ")
	addr := loopback.Addr(t)
	fields := strings.Fields(strings.TrimSuffix(strings.Replace(serveLine, "127.0.0.1:3001", addr, 1), "&"))
	srv := exec.Command(server, fields[3:]...)
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("%s: no endpoint printed: %v", serveLine, err)
	}

	ran := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "bin/mcpdrift drifttest ") {
			continue
		}
		ran++
		var args []string
		for _, a := range shellFields(t, strings.TrimPrefix(line, "bin/mcpdrift ")) {
			a = strings.Replace(a, "127.0.0.1:3001", addr, 1)
			a = strings.Replace(a, "go run ./examples/driftserver", server, 1)
			if strings.HasPrefix(a, "examples/") {
				a = "../../" + a
			}
			args = append(args, a)
		}
		code, stdout, stderr := mcpdrift(t, args...)
		switch {
		case strings.Contains(line, "-fault no-adapter"):
			if code != 1 || !strings.Contains(stdout, "**success_without_adapter**") || strings.Count(stdout, "❌ success_without_adapter") != 6 || strings.Count(stdout, "❌") != 7 {
				// -max-calls 6: deploy_preview's three argument objects, each in both passes.
				t.Errorf("%s: exit %d, want 1 and deploy_preview's six calls, only they, failing:\n%s%s", line, code, stdout, stderr)
			}
		default:
			if code != 0 || !strings.Contains(stdout, "### ✅ Drift test") || !strings.Contains(stdout, "✅ normalized") {
				t.Errorf("%s: exit %d, want 0 and every call passing:\n%s%s", line, code, stdout, stderr)
			}
		}
	}
	if ran != 2 {
		t.Fatalf("found %d drifttest lines in the README section, want 2", ran)
	}

	// The serve line turns the endpoint on: a dry run of the same test
	// through it plans the CLI's 24 calls to the same server.
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skipf("the serve line needs the engine: %v", err)
	}
	serve := strings.Fields(findLine(t, section, "bin/mcpdrift serve "))
	bin := filepath.Join(t.TempDir(), "mcpdrift")
	build(t, bin, ".")
	api := startServe(t, bin, t.TempDir(), serve[2:]...).api
	old, err := json.Marshal(map[string]any{"server": "http://" + addr + "/mcp", "old": json.RawMessage(readFile(t, "../../examples/driftserver/old.json")), "dry_run": true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+api+"/api/v1/drifttest", "application/json", bytes.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Pass   bool             `json:"pass"`
		Report drifttest.Report `json:"report"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); resp.StatusCode != http.StatusOK || err != nil || !body.Pass || !body.Report.DryRun || len(body.Report.Results) != 24 {
		t.Errorf("POST /api/v1/drifttest (dry run) to %s: %d %.300s", strings.Join(serve, " "), resp.StatusCode, raw)
	}
}

// shellFields splits a command line as a shell would for the README's
// lines: on spaces, single quotes keeping what they enclose together.
func shellFields(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '\'' {
			q, rest, ok := strings.Cut(line[1:], "'")
			if !ok {
				t.Fatalf("unbalanced quote in %q", line)
			}
			out, line = append(out, q), rest
			continue
		}
		f, rest, _ := strings.Cut(line, " ")
		out, line = append(out, f), rest
	}
	return out
}
