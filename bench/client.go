package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
)

// clientEnv carries the sender child's clientSpec, as JSON. A process that
// finds it set runs as the sender (main and the tests' TestMain check it).
const clientEnv = "MCPDRIFT_BENCH_CLIENT"

// exportMethod is the OTLP/gRPC logs export method.
const exportMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

// clientSpec tells the sender child what to send where.
type clientSpec struct {
	Addr    string `json:"addr"`    // the ingester's OTLP/gRPC address
	File    string `json:"file"`    // the requests file (see requestSet)
	Streams int    `json:"streams"` // concurrent senders
	// Flood, when positive, makes the sender flood the ingester for that
	// long instead of sending every request once (see flood).
	Flood time.Duration `json:"flood_ns,omitempty"`
}

// clientResult is what the sender child reports on its last line.
type clientResult struct {
	Requests int    `json:"requests"` // requests acknowledged
	Rejected int64  `json:"rejected"` // log records rejected through partial success
	Message  string `json:"message,omitempty"`
	CPU      int64  `json:"cpu_ns"`  // the child's CPU while sending
	Wall     int64  `json:"wall_ns"` // from the start signal to the last answer
	Error    string `json:"error,omitempty"`
	// Flood is the flood's answers, when the sender flooded.
	Flood *floodCounts `json:"flood,omitempty"`
}

// rawCodec sends pre-marshalled requests as they are and keeps the answers'
// bytes, so the sender spends nothing on protobuf. Its name is "proto": the
// server decodes with its own protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec cannot unmarshal into %T", v)
	}
	*b = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// clientMain is the sender child. It maps the requests, connects one gRPC
// connection per stream, says "ready" on stdout, waits for a line on stdin,
// sends every request once across the streams, and reports a clientResult
// as JSON on stdout. It returns the exit code.
func clientMain(specJSON string) int {
	res, err := runClient(specJSON, os.Stdin, os.Stdout)
	if err != nil {
		res.Error = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintf(os.Stderr, "bench client: cannot write result: %v\n", err)
		return 1
	}
	if res.Error != "" {
		return 1
	}
	return 0
}

func runClient(specJSON string, in io.Reader, out io.Writer) (clientResult, error) {
	var spec clientSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return clientResult{}, fmt.Errorf("cannot parse %s: %w", clientEnv, err)
	}
	data, reqs, err := mapRequests(spec.File)
	if err != nil {
		return clientResult{}, err
	}
	defer unmap(data)
	var counts []int
	if spec.Flood > 0 {
		if counts, err = readCounts(spec.File); err != nil {
			return clientResult{}, err
		}
	}

	conns := make([]*grpc.ClientConn, spec.Streams)
	for i := range conns {
		c, err := grpc.NewClient(spec.Addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(64<<20)))
		if err != nil {
			return clientResult{}, fmt.Errorf("cannot create gRPC client for %s: %w", spec.Addr, err)
		}
		defer c.Close()
		c.Connect()
		conns[i] = c
	}
	if _, err := fmt.Fprintln(out, "ready"); err != nil {
		return clientResult{}, err
	}
	if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
		return clientResult{}, fmt.Errorf("cannot read the start signal: %w", err)
	}

	cpu0, wall0 := processCPU(), time.Now()
	if spec.Flood > 0 {
		fc, err := flood(conns, reqs, counts, spec.Flood)
		return clientResult{
			Requests: int(fc.OK),
			Rejected: fc.Rejected,
			CPU:      int64(processCPU() - cpu0),
			Wall:     int64(time.Since(wall0)),
			Flood:    &fc,
		}, err
	}
	var (
		next     atomic.Int64
		done     atomic.Int64
		rejected atomic.Int64
		errOnce  sync.Once
		firstErr error
		msgOnce  sync.Once
		message  string
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range conns {
		wg.Go(func() {
			var resp []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(reqs) || ctx.Err() != nil {
					return
				}
				req := reqs[i]
				resp = resp[:0]
				if err := c.Invoke(ctx, exportMethod, &req, &resp, grpc.WaitForReady(true)); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("request %d of %d bytes: %w", i, len(req), err) })
					cancel()
					return
				}
				done.Add(1)
				if len(resp) == 0 {
					continue
				}
				r := plogotlp.NewExportResponse()
				if err := r.UnmarshalProto(resp); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("cannot unmarshal response of %d bytes: %w", len(resp), err) })
					cancel()
					return
				}
				if n := r.PartialSuccess().RejectedLogRecords(); n > 0 {
					rejected.Add(n)
					msgOnce.Do(func() { message = r.PartialSuccess().ErrorMessage() })
				}
			}
		})
	}
	wg.Wait()
	res := clientResult{
		Requests: int(done.Load()),
		Rejected: rejected.Load(),
		Message:  message,
		CPU:      int64(processCPU() - cpu0),
		Wall:     int64(time.Since(wall0)),
	}
	return res, firstErr
}

// client is a running sender child, seen from the ingester's process.
type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// startClient starts the sender child and waits until it is ready to send.
func startClient(spec clientSpec) (*client, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the executable to run the sender: %w", err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), clientEnv+"="+string(specJSON))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the sender: %w", err)
	}
	c := &client{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}
	line, err := c.stdout.ReadString('\n')
	if err != nil || line != "ready\n" {
		res, rerr := c.result(line)
		if rerr == nil && res.Error != "" {
			rerr = errors.New(res.Error)
		}
		return nil, fmt.Errorf("sender did not get ready: %w", errors.Join(err, rerr))
	}
	return c, nil
}

// run tells the child to send and waits for its result.
func (c *client) run() (clientResult, error) {
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		return clientResult{}, fmt.Errorf("cannot start the sender: %w", err)
	}
	line, err := c.stdout.ReadString('\n')
	if err != nil {
		_ = c.cmd.Wait()
		return clientResult{}, fmt.Errorf("cannot read the sender's result: %w", err)
	}
	res, err := c.result(line)
	if err != nil {
		return res, err
	}
	if res.Error != "" {
		return res, fmt.Errorf("sender: %s", res.Error)
	}
	return res, nil
}

// result parses the child's result line and waits for it to exit.
func (c *client) result(line string) (clientResult, error) {
	var res clientResult
	perr := json.Unmarshal([]byte(line), &res)
	_ = c.stdin.Close()
	werr := c.cmd.Wait()
	if perr != nil {
		return res, fmt.Errorf("cannot parse the sender's result %q: %w (exit: %v)", line, perr, werr)
	}
	if werr != nil && res.Error == "" {
		return res, fmt.Errorf("sender: %w", werr)
	}
	return res, nil
}
