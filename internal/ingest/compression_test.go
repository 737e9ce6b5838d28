package ingest

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/pierrec/lz4/v4"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// compressors are the encoders of each content coding, as the Collector's
// OTLP/HTTP exporter uses them (config/confighttp): the same libraries or,
// for snappy, one that writes the same formats.
var compressors = map[string]func(testing.TB, []byte) []byte{
	receiver.CodingGzip: gzipped,
	receiver.CodingZstd: func(t testing.TB, b []byte) []byte {
		return writeAll(t, b, func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1)) })
	},
	receiver.CodingZlib:    zlibbed,
	receiver.CodingDeflate: zlibbed,
	receiver.CodingSnappy:  func(_ testing.TB, b []byte) []byte { return snappy.Encode(nil, b) },
	receiver.CodingSnappyFramed: func(t testing.TB, b []byte) []byte {
		return writeAll(t, b, func(w io.Writer) (io.WriteCloser, error) { return snappy.NewBufferedWriter(w), nil })
	},
	receiver.CodingLZ4: func(t testing.TB, b []byte) []byte {
		return writeAll(t, b, func(w io.Writer) (io.WriteCloser, error) { return lz4.NewWriter(w), nil })
	},
}

func zlibbed(t testing.TB, b []byte) []byte {
	return writeAll(t, b, func(w io.Writer) (io.WriteCloser, error) { return zlib.NewWriter(w), nil })
}

// framedSnappy is the snappy framing format, which Collectors before the
// block format sent as "snappy".
func framedSnappy(t testing.TB, b []byte) []byte {
	return compressors[receiver.CodingSnappyFramed](t, b)
}

func writeAll(t testing.TB, b []byte, open func(io.Writer) (io.WriteCloser, error)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := open(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zstdFrame returns a zstd frame holding one empty raw block whose header
// declares a window of 1<<windowLog bytes, or, when contentSize is not
// zero, a single segment of contentSize bytes.
func zstdFrame(windowLog uint, contentSize uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	if contentSize > 0 {
		b = append(b, 0xE0) // 8-byte content size, single segment
		b = binary.LittleEndian.AppendUint64(b, contentSize)
	} else {
		b = append(b, 0x00, byte(windowLog-10)<<3)
	}
	return append(b, 0x01, 0x00, 0x00) // last block, raw, empty
}

// snappyBlockClaiming is a snappy block whose header claims n bytes once
// decoded, followed by a few literal bytes.
func snappyBlockClaiming(n uint64) []byte {
	return append(binary.AppendUvarint(nil, n), 0x08, 'x', 'y', 'z')
}

// TestHTTPContentCodings sends each content coding the OTLP exporters
// offer: a request in it is stored; a bomb (small on the wire, over the
// limit once decompressed) is 413; a corrupt body is 400, naming the
// coding; the server holds none of their bytes afterwards.
func TestHTTPContentCodings(t *testing.T) {
	const limit = 64 << 10
	cfg := testConfig()
	cfg.MaxRequestBytes = limit
	w := &sink{}
	s := newServer(t, cfg, w, true)
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs

	type tc struct {
		name, coding string
		body         []byte
		enc          encoding
		status       int
		stored       int
		rejected     int64
		msg          string
	}
	var cases []tc
	for coding, compress := range compressors {
		bomb := compress(t, make([]byte, 1<<20))
		if len(bomb) >= limit {
			t.Fatalf("%s: a bomb of %d bytes is not under the limit of %d on the wire", coding, len(bomb), limit)
		}
		valid := compress(t, encode(t, encodingProto, drift{valid: 3, unknown: 1}))
		cases = append(cases,
			tc{name: "valid", coding: coding, body: valid, status: 200, stored: 3, rejected: 1},
			tc{name: "valid json", coding: coding, enc: encodingJSON, body: compress(t, encode(t, encodingJSON, drift{valid: 2})), status: 200, stored: 2},
			tc{name: "upper case", coding: strings.ToUpper(coding), body: compress(t, encode(t, encodingProto, drift{valid: 1})), status: 200, stored: 1},
			tc{name: "bomb", coding: coding, body: bomb, status: 413, msg: "decompressed"},
			tc{name: "truncated", coding: coding, body: valid[:len(valid)/2], status: 400, msg: coding},
			tc{name: "garbage", coding: coding, body: []byte("\xff\xfe\xfd\xfc not compressed at all, surely"), status: 400, msg: coding},
		)
	}
	cases = append(cases,
		tc{name: "framed as snappy", coding: receiver.CodingSnappy, body: framedSnappy(t, encode(t, encodingProto, drift{valid: 2})), status: 200, stored: 2},
		tc{name: "framed bomb as snappy", coding: receiver.CodingSnappy, body: framedSnappy(t, make([]byte, 1<<20)), status: 413, msg: "decompressed"},
		tc{name: "block claiming too much", coding: receiver.CodingSnappy, body: snappyBlockClaiming(10 << 20), status: 413, msg: "decompressed"},
		tc{name: "block claiming 1 TiB", coding: receiver.CodingSnappy, body: snappyBlockClaiming(1 << 40), status: 400, msg: "snappy"},
		tc{name: "window over RFC 9659", coding: receiver.CodingZstd, body: zstdFrame(26, 0), status: 400, msg: "RFC 9659"},
		tc{name: "single segment over RFC 9659", coding: receiver.CodingZstd, body: zstdFrame(0, 100<<20), status: 400, msg: "RFC 9659"},
		tc{name: "zstd frames on end", coding: receiver.CodingZstd, body: append(compressors[receiver.CodingZstd](t, encode(t, encodingProto, drift{valid: 1})), zstdFrame(12, 0)...), status: 200, stored: 1},
		tc{name: "unknown coding", coding: "br", body: []byte("x"), status: 415, msg: "zstd"},
	)
	for _, c := range cases {
		t.Run(c.coding+"/"+c.name, func(t *testing.T) {
			enc := c.enc
			if enc == "" {
				enc = encodingProto
			}
			before := w.total()
			a := do(t, http.MethodPost, url, enc.mediaType(), c.coding, enc, bytes.NewReader(c.body))
			if a.status != c.status {
				t.Fatalf("status %d (%s), want %d", a.status, a.message, c.status)
			}
			if c.status != 200 && a.statusCode != codes.InvalidArgument {
				t.Errorf("Status code %s, want InvalidArgument", a.statusCode)
			}
			if !strings.Contains(strings.ToLower(a.message), strings.ToLower(c.msg)) {
				t.Errorf("message %q does not contain %q", a.message, c.msg)
			}
			if a.rejected != c.rejected {
				t.Errorf("rejected %d, want %d", a.rejected, c.rejected)
			}
			if got := w.total() - before; got != c.stored {
				t.Errorf("%d events stored, want %d", got, c.stored)
			}
			if held := s.recv.InflightBytes(); held != 0 {
				t.Errorf("%d bytes still held in flight", held)
			}
		})
	}
}

// TestHTTPZstdWindowBudget: a zstd body's window is taken from the
// in-flight budget while it is read: with a budget the window does not fit
// in beside the body, the request is refused as retryable, not decoded.
func TestHTTPZstdWindowBudget(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes = 1 << 20
	cfg.MaxInflightBytes = 2 << 20
	w := &sink{}
	s := newServer(t, cfg, w, true)
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs

	small := compressors[receiver.CodingZstd](t, encode(t, encodingProto, drift{valid: 2}))
	if a := do(t, http.MethodPost, url, receiver.MediaProto, receiver.CodingZstd, encodingProto, bytes.NewReader(small)); a.status != 200 {
		t.Fatalf("small window: status %d (%s)", a.status, a.message)
	}
	big := append(zstdFrame(23, 0), small...) // an 8 MiB window, then the request
	a := do(t, http.MethodPost, url, receiver.MediaProto, receiver.CodingZstd, encodingProto, bytes.NewReader(big))
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
		t.Fatalf("8 MiB window in a 2 MiB budget: status %d, Retry-After %q (%s); want 503 with Retry-After", a.status, a.header.Get("Retry-After"), a.message)
	}
	if w.total() != 2 || s.recv.InflightBytes() != 0 {
		t.Errorf("%d events stored, %d bytes held; want 2, 0", w.total(), s.recv.InflightBytes())
	}
}

// rawCompressor sends the bytes that compress makes of each message under
// the name of a gRPC compressor, so that a test can send any payload, bombs
// included, as that compression.
type rawCompressor struct {
	name     string
	compress func(p []byte) []byte
}

func (c rawCompressor) Do(w io.Writer, p []byte) error {
	_, err := w.Write(c.compress(p))
	return err
}

func (c rawCompressor) Type() string { return c.name }

// TestGRPCCompressors sends requests compressed as the Collector's OTLP
// exporter compresses them (zstd, snappy framed) — through gRPC's own
// compressor option and as bytes the test compresses itself — and bombs:
// each request is stored, each bomb is RESOURCE_EXHAUSTED, an oversized
// zstd window is refused, and the server goes on serving.
func TestGRPCCompressors(t *testing.T) {
	const limit = 64 << 10
	cfg := testConfig()
	cfg.MaxRequestBytes = limit
	w := &sink{}
	s := newServer(t, cfg, w, true)
	dial := func(t *testing.T, opts ...grpc.DialOption) plogotlp.GRPCClient {
		t.Helper()
		cc, err := grpc.NewClient(s.GRPCAddr().String(), append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cc.Close() })
		return plogotlp.NewGRPCClient(cc)
	}
	exportWith := func(t *testing.T, c plogotlp.GRPCClient, opts ...grpc.CallOption) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Export(ctx, plogotlp.NewExportRequestFromLogs(drift{valid: 2}.logs()), opts...)
		return err
	}
	zstdAll := func(p []byte) []byte {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(512<<10))
		defer e.Close()
		return e.EncodeAll(p, nil)
	}
	snappyFramed := func(p []byte) []byte { return framedSnappy(t, p) }
	zeros := make([]byte, 1<<20)

	for _, name := range []string{receiver.CodingZstd, receiver.CodingSnappy} {
		encode := zstdAll
		if name == receiver.CodingSnappy {
			encode = snappyFramed
		}
		t.Run(name, func(t *testing.T) {
			before := w.total()
			if err := exportWith(t, dial(t), grpc.UseCompressor(name)); err != nil {
				t.Fatalf("with grpc.UseCompressor: %v", err)
			}
			if err := exportWith(t, dial(t, grpc.WithCompressor(rawCompressor{name, encode}))); err != nil {
				t.Fatalf("compressed by the test: %v", err)
			}
			bomb := encode(zeros)
			if len(bomb) >= limit {
				t.Fatalf("a bomb of %d bytes is not under the limit of %d on the wire", len(bomb), limit)
			}
			err := exportWith(t, dial(t, grpc.WithCompressor(rawCompressor{name, func([]byte) []byte { return bomb }})))
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("bomb: error %v, want ResourceExhausted", err)
			}
			if name == receiver.CodingZstd {
				err := exportWith(t, dial(t, grpc.WithCompressor(rawCompressor{name, func([]byte) []byte { return zstdFrame(26, 0) }})))
				if err == nil || !strings.Contains(err.Error(), "window") {
					t.Fatalf("64 MiB window: error %v, want a refusal naming the window", err)
				}
			}
			if got := w.total() - before; got != 4 {
				t.Errorf("%d events stored, want 4", got)
			}
		})
	}
}

// TestCodingsTested: every coding accepted has its compressor here, and
// no other (receiver's TestCodingList checks that the message names them).
func TestCodingsTested(t *testing.T) {
	for _, coding := range receiver.Codings() {
		if compressors[coding] == nil {
			t.Errorf("coding %s accepted but not tested", coding)
		}
	}
	if len(compressors) != len(receiver.Codings()) {
		t.Errorf("%d codings tested, %d accepted", len(compressors), len(receiver.Codings()))
	}
}
