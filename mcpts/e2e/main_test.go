// Package e2e runs the TypeScript instrumentation (mcpts) end to end
// against a real mcpdrift serve: TypeScript servers and clients in node
// processes, Go ones (otelschema/mcpgo) in this process, their events
// exported by the OpenTelemetry SDKs over OTLP/gRPC, stored, and read back
// raw and through the API. It holds tests only.
//
// The node programs are mcpts/e2e/node, compiled by `npm run build:test`
// into mcpts/build/e2e/node (make test-mcpts builds them first). Without
// them, or without node, the tests skip, unless MCPDRIFT_REQUIRE_MCPTS=1.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/testing/apptest"
)

// shared is the package's one mcpdrift serve (see apptest).
var shared = apptest.NewServe("mcpts-e2e")

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// serve returns the shared mcpdrift serve.
func serve(t *testing.T) *app.Process { return shared.Get(t) }

// nodeDir is where npm run build:test puts the end-to-end programs.
const nodeDir = "../build/e2e/node"

// requireNode returns the node binary, or skips when node or the built
// programs are missing (a failure with MCPDRIFT_REQUIRE_MCPTS=1).
func requireNode(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err == nil {
		for _, p := range []string{"server.js", "client.js"} {
			if _, err = os.Stat(filepath.Join(nodeDir, p)); err != nil {
				err = fmt.Errorf("%w (build them with: cd mcpts && npm ci && npm run build:test)", err)
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_MCPTS") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_MCPTS=1: %v", err)
		}
		t.Skipf("the TypeScript programs cannot run: %v", err)
	}
	return bin
}

// nodeProc is a node program speaking the harness's line protocol: JSON
// messages on its stdout, commands on its stdin.
type nodeProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan map[string]any
	stderr *bytes.Buffer
	exited chan error
}

// startNode runs nodeDir/script with args and the environment env (added
// to this process's); it is killed at the end of the test if still running.
func startNode(t *testing.T, env map[string]string, script string, args ...string) *nodeProc {
	t.Helper()
	bin := requireNode(t)
	cmd := exec.Command(bin, append([]string{filepath.Join(nodeDir, script)}, args...)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &nodeProc{name: script + " " + strings.Join(args, " "), cmd: cmd, lines: make(chan map[string]any, 16),
		stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", p.name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"event": "unreadable", "line": sc.Text()}
			}
			p.lines <- m
		}
		close(p.lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// expect returns the program's next message, which must be event.
func (p *nodeProc) expect(t *testing.T, event string) map[string]any {
	t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			t.Fatalf("%s exited before saying %q:\n%s", p.name, event, p.stderrText())
		}
		if m["event"] != event {
			t.Fatalf("%s said %v, want %q:\n%s", p.name, m, event, p.stderrText())
		}
		return m
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say %q within 60 s:\n%s", p.name, event, p.stderrText())
	}
	return nil
}

// send writes a command to the program.
func (p *nodeProc) send(t *testing.T, cmd string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		t.Fatalf("%s: %v:\n%s", p.name, err, p.stderrText())
	}
}

// wait waits for the program to exit successfully.
func (p *nodeProc) wait(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	for range p.lines {
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Fatalf("%s: %v:\n%s", p.name, err, p.stderrText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit", p.name)
	}
}

func (p *nodeProc) stderrText() string {
	return p.cmd.Stderr.(*lockedWriter).String()
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
