package ingest

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// CompareLogsDecoders decodes the protobuf body of a logs export with the
// ingester's limits both ways — otelschema.DecodeLogsProto, as the
// protobuf transports do, and pdata then DecodeLogs, as they did — and fails
// t unless both give the same events and Result, or both refuse b. It
// reports whether b is a request. (Exported for ingest_test.)
func CompareLogsDecoders(t testing.TB, b []byte) bool {
	t.Helper()
	now := time.Now()
	d := otelschema.Decoder{Limits: DefaultConfig().Limits, Now: func() time.Time { return now }}
	got, gotRes, err := d.DecodeLogsProto(b, nil)
	req := plogotlp.NewExportRequest()
	if perr := req.UnmarshalProto(b); perr != nil {
		if err == nil {
			t.Fatalf("pdata refuses the %d-byte body (%v), DecodeLogsProto accepts it", len(b), perr)
		}
		return false
	}
	if err != nil {
		t.Fatalf("DecodeLogsProto refuses the %d-byte body that pdata accepts: %v", len(b), err)
	}
	want, wantRes := d.DecodeLogs(req.Logs(), nil)
	if !reflect.DeepEqual(gotRes, wantRes) {
		t.Fatalf("results differ:\nDecodeLogsProto: %+v %q\nDecodeLogs:      %+v %q", gotRes, gotRes.Message(), wantRes, wantRes.Message())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events differ:\nDecodeLogsProto: %+v\nDecodeLogs:      %+v", got, want)
	}
	return true
}

// TestLogsDecodersAgree runs both decoders over the requests of this
// package's tests and its fuzz corpus.
func TestLogsDecodersAgree(t *testing.T) {
	for _, d := range []drift{{}, {valid: 7}, {valid: 3, unknown: 2, noTool: 1, other: 4}, {valid: 450, unknown: 25, other: 25}} {
		if !CompareLogsDecoders(t, encode(t, encodingProto, d)) {
			t.Fatalf("%+v: refused", d)
		}
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzHTTPLogs/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, path := range files {
		body, json, coding := readHTTPLogsSeed(t, path)
		if coding != "" {
			var ok bool
			if body, ok = decompress(coding, body); !ok {
				continue
			}
		}
		if !json {
			CompareLogsDecoders(t, body)
		}
	}
}

// decompress returns a corpus seed's body in coding decompressed, as the
// receiver reads it (at most 4 MiB, a zstd window of at most 8 MiB); ok is
// false for a body that is not in coding, and for the snappy block format,
// which the receiver decodes whole and this test passes over.
func decompress(coding string, body []byte) (out []byte, ok bool) {
	src := bytes.NewReader(body)
	var r io.Reader
	var err error
	switch coding {
	case receiver.CodingGzip:
		r, err = gzip.NewReader(src)
	case receiver.CodingZlib, receiver.CodingDeflate:
		r, err = zlib.NewReader(src)
	case receiver.CodingZstd:
		var d *zstd.Decoder
		if d, err = zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20)); err == nil {
			defer d.Close()
			r = d
		}
	case receiver.CodingSnappy, receiver.CodingSnappyFramed:
		if !bytes.HasPrefix(body, []byte("\xff\x06\x00\x00sNaPpY")) {
			return nil, false
		}
		r = snappy.NewReader(src)
	case receiver.CodingLZ4:
		r = lz4.NewReader(src)
	default:
		return nil, false
	}
	if err != nil {
		return nil, false
	}
	out, err = io.ReadAll(io.LimitReader(r, 4<<20))
	return out, err == nil
}

// readHTTPLogsSeed reads a FuzzHTTPLogs corpus file: the body, json, and
// the content coding.
func readHTTPLogsSeed(t *testing.T, path string) (body []byte, json bool, coding string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("%s: not a FuzzHTTPLogs input", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var i uint8
	if _, err := fmt.Sscanf(lines[3], "uint8(%d)", &i); err != nil {
		t.Fatalf("%s: coding %q: %v", path, lines[3], err)
	}
	return []byte(s), lines[2] == "bool(true)", fuzzCodings[int(i)%len(fuzzCodings)]
}

// rawLogsClient sends protobuf bytes to the LogsService as they are.
func rawLogsClient(t *testing.T, s *Server) func(ctx context.Context, b []byte) ([]byte, error) {
	t.Helper()
	cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return func(ctx context.Context, b []byte) ([]byte, error) {
		var out rawBytes
		err := cc.Invoke(ctx, "/opentelemetry.proto.collector.logs.v1.LogsService/Export", rawBytes(b), &out)
		return []byte(out), err
	}
}

func TestGRPCLogsMalformed(t *testing.T) {
	w := &sink{}
	s := newServer(t, testConfig(), w, true)
	send := rawLogsClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	valid := encode(t, encodingProto, drift{valid: 2, noTool: 1})
	for _, b := range [][]byte{valid[:len(valid)-3], {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, []byte("not protobuf")} {
		_, err := send(ctx, b)
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "cannot decode request of") {
			t.Errorf("%d bytes: error %v, want InvalidArgument", len(b), err)
		}
	}
	if st := s.Stats(); st.Refused.Malformed != 3 || st.Requests != 3 || st.Records != 0 {
		t.Errorf("stats %+v", st)
	}

	out, err := send(ctx, valid)
	if err != nil {
		t.Fatal(err)
	}
	resp := plogotlp.NewExportResponse()
	if err := resp.UnmarshalProto(out); err != nil {
		t.Fatal(err)
	}
	if n := resp.PartialSuccess().RejectedLogRecords(); n != 1 || w.total() != 2 {
		t.Errorf("%d rejected, %d stored; want 1, 2", n, w.total())
	}
}

// TestGRPCLogsLarge sends requests that reach the server in many HTTP/2
// frames, which the codec joins.
func TestGRPCLogsLarge(t *testing.T) {
	w := &sink{}
	s := newServer(t, testConfig(), w, true)
	c := grpcClient(t, s)
	for range 3 {
		resp, err := export(t, c, drift{valid: 3000, noTool: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := resp.PartialSuccess().RejectedLogRecords(); n != 2 {
			t.Errorf("%d rejected, want 2", n)
		}
	}
	if got := w.total(); got != 9000 {
		t.Errorf("%d events stored, want 9000", got)
	}
}
