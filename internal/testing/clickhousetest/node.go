// Package clickhousetest is test scaffolding: it runs real ClickHouse
// servers out of libchdb on loopback, for the tests of the server backend
// and of the scale-out roles. libchdb is ClickHouse itself; run as
// clickhouse-local's main with its listeners started (see chnode), it is a
// ClickHouse server over the native and HTTP protocols.
//
// A Node is one server process with its own data directory and ports; a
// Cluster is nodes that know one another as the shards of one
// remote_servers entry, so that Distributed tables, the sharding key and
// GLOBAL IN run for real. clickhouse-local cannot run ON CLUSTER DDL (it
// has no DDL worker) nor Replicated tables (no interserver listener), so a
// Cluster applies the cluster-mode schema node by node with both taken out
// (see Cluster.Migrate): replication and distributed DDL are golden-tested
// in store/schema, not run here.
//
// Nodes are stopped by their pid: Stop sends SIGTERM, Kill SIGKILL, and a
// node started by a test also exits when the test process dies (it watches
// its standard input).
package clickhousetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// DefaultMemoryBytes is the max_server_memory_usage of a node:
// clickhouse-local otherwise allows itself 90 % of the machine's memory.
const DefaultMemoryBytes = 4 << 30

// startTimeout bounds the wait for a node's /ping.
const startTimeout = 60 * time.Second

// Node is one ClickHouse server run out of libchdb. Its ports are fixed
// when it is created, so that it restarts on the same ones.
type Node struct {
	// Name identifies the node in logs and errors.
	Name string
	// Dir holds the node's data (data/), its config.xml and its log.
	Dir string
	// TCPPort and HTTPPort are the loopback ports of the native and HTTP
	// protocols.
	TCPPort, HTTPPort int

	bin, lib string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
}

// Addr is the node's native protocol address.
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.TCPPort)) }

// DSN is the node's clickhouse:// DSN.
func (n *Node) DSN() string { return "clickhouse://" + n.Addr() }

// HTTPURL is the base URL of the node's HTTP interface.
func (n *Node) HTTPURL() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(n.HTTPPort))
}

// Pid returns the pid of the running node process, 0 when it is not
// running.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// LogPath is the file the node's stderr goes to.
func (n *Node) LogPath() string { return filepath.Join(n.Dir, "node.log") }

// newNode prepares a node in dir with free ports and the given extra
// config, without starting it.
func newNode(name, dir string, extraConfig string, memory int64) (*Node, error) {
	bin, err := nodeBinary()
	if err != nil {
		return nil, err
	}
	lib, err := embedded.LibraryPath()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o750); err != nil {
		return nil, fmt.Errorf("cannot create node directory: %w", err)
	}
	n := &Node{Name: name, Dir: dir, TCPPort: ports[0], HTTPPort: ports[1], bin: bin, lib: lib}
	if err := writeConfig(n, memory, extraConfig); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *Node) configPath() string { return filepath.Join(n.Dir, "config.xml") }

// nodeConfig is the config.xml of a node. background_distributed_schedule_pool_size
// is 0 in clickhouse-local, which would leave background Distributed
// inserts queued for ever; query_log makes each statement's settings
// visible to tests, and query_views_log each materialised view's cost to
// the bench.
func nodeConfig(memory int64, extra string) string {
	return fmt.Sprintf(`<clickhouse>
    <max_server_memory_usage>%d</max_server_memory_usage>
    <background_distributed_schedule_pool_size>4</background_distributed_schedule_pool_size>
    <query_log>
        <database>system</database>
        <table>query_log</table>
        <flush_interval_milliseconds>500</flush_interval_milliseconds>
    </query_log>
    <query_views_log>
        <database>system</database>
        <table>query_views_log</table>
        <flush_interval_milliseconds>500</flush_interval_milliseconds>
    </query_views_log>
%s</clickhouse>
`, memory, extra)
}

// Start runs the node and waits until it answers /ping.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.cmd != nil {
		n.mu.Unlock()
		return fmt.Errorf("node %s is already running (pid %d)", n.Name, n.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(n.LogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("cannot open node log: %w", err)
	}
	cmd := exec.Command(n.bin, "-lib", n.lib, "-watch-stdin", "--",
		"--path="+filepath.Join(n.Dir, "data")+"/", "-C", n.configPath(),
		"--tcp_port="+strconv.Itoa(n.TCPPort), "--http_port="+strconv.Itoa(n.HTTPPort),
		"--listen_host=127.0.0.1", "--log-level=warning")
	cmd.Dir = n.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The node dies with this process: its stdin closes, and Pdeathsig
	// covers the rest.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logFile.Close()
		n.mu.Unlock()
		return err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		n.mu.Unlock()
		return fmt.Errorf("cannot start node %s: %w", n.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	n.cmd, n.stdin, n.exited = cmd, stdin, exited
	n.mu.Unlock()
	return n.waitReady(ctx, exited)
}

// waitReady polls /ping until the node answers, it exits or ctx ends.
func (n *Node) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(n.HTTPURL() + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			n.reset()
			return fmt.Errorf("node %s exited before it answered: %s", n.Name, n.logTail())
		case <-ctx.Done():
			_ = n.Kill()
			return fmt.Errorf("node %s did not answer /ping within %s: %s", n.Name, startTimeout, n.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (n *Node) reset() {
	n.mu.Lock()
	n.cmd, n.stdin, n.exited = nil, nil, nil
	n.mu.Unlock()
}

// logTail returns the end of the node's log.
func (n *Node) logTail() string {
	b, _ := os.ReadFile(n.LogPath())
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(empty log)"
	}
	return string(b)
}

// Stop ends the node with SIGTERM and waits for it; its data stays.
func (n *Node) Stop() error { return n.signal(syscall.SIGTERM) }

// Kill ends the node with SIGKILL and waits for it; its data stays.
func (n *Node) Kill() error { return n.signal(syscall.SIGKILL) }

func (n *Node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	cmd, stdin, exited := n.cmd, n.stdin, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot signal node %s (pid %d): %w", n.Name, cmd.Process.Pid, err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	stdin.Close()
	n.reset()
	return nil
}

// freePorts returns n loopback ports that are free now.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	out := make([]int, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cannot find a free port: %w", err)
		}
		lns = append(lns, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}

// NodeBinaryEnv names a prebuilt chnode binary; without it the package
// builds one with the go command on first use.
const NodeBinaryEnv = "MCPDRIFT_CHNODE"

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// nodeBinary returns the chnode binary, building it once per process.
func nodeBinary() (string, error) {
	if p := os.Getenv(NodeBinaryEnv); p != "" {
		return p, nil
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "chnode-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "chnode")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest/chnode")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("cannot build chnode: %w: %s", err, strings.TrimSpace(string(out)))
		}
	})
	return binPath, binErr
}

// StartServer starts one node in dir, a single ClickHouse server.
func StartServer(ctx context.Context, dir string) (*Node, error) {
	n, err := newNode("server", dir, "", DefaultMemoryBytes)
	if err != nil {
		return nil, err
	}
	if err := n.Start(ctx); err != nil {
		return nil, err
	}
	return n, nil
}
