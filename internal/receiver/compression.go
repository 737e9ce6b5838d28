package receiver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	grpcencoding "google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // accept gzip-compressed gRPC requests
)

// The content codings of OTLP requests: every compression the OTLP
// exporters of the OpenTelemetry SDKs and Collector send (configcompression
// of the Collector: gzip, zstd, zlib, deflate, snappy, x-snappy-framed and
// lz4 over HTTP; gzip, zstd and snappy over gRPC).
const (
	CodingGzip = "gzip"
	CodingZstd = "zstd"
	// CodingZlib and CodingDeflate are both the zlib format (RFC 1950),
	// which is what RFC 9110 calls deflate and what the Collector sends
	// under either name.
	CodingZlib    = "zlib"
	CodingDeflate = "deflate"
	// CodingSnappy is the snappy block format; Collectors before the block
	// format sent the framing format under this name, which is told apart
	// by its stream identifier and accepted too.
	CodingSnappy       = "snappy"
	CodingSnappyFramed = "x-snappy-framed"
	// CodingLZ4 is the LZ4 frame format.
	CodingLZ4 = "lz4"
)

// httpCodings lists the content codings accepted over OTLP/HTTP, for
// messages.
var httpCodings = []string{CodingGzip, CodingZstd, CodingZlib, CodingDeflate, CodingSnappy, CodingSnappyFramed, CodingLZ4}

// Codings returns the content codings accepted over OTLP/HTTP.
func Codings() []string { return append([]string(nil), httpCodings...) }

// zstdMaxWindow is the largest zstd window accepted: the one RFC 9659 sets
// for the zstd content coding. A decoder holds a window of history (the
// whole frame, for a single-segment frame), so this bounds the memory one
// zstd body takes besides its output.
const zstdMaxWindow = 8 << 20

// zstdBlockSpace is what a zstd decoder holds beside its window: room for
// two blocks of at most 128 KiB.
const zstdBlockSpace = 2 * (128 << 10)

// zstdDecoderOptions are those of every zstd decoder: synchronous (no
// goroutines, nothing gained on one request), and windows bounded by
// zstdMaxWindow, single-segment frames included.
var zstdDecoderOptions = []zstd.DOption{
	zstd.WithDecoderConcurrency(1),
	zstd.WithDecoderLowmem(true),
	zstd.WithDecoderMaxWindow(zstdMaxWindow),
}

// snappyStreamID opens every stream of the snappy framing format.
var snappyStreamID = []byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}

// decoders pools the decompressors of OTLP/HTTP request bodies.
type decoders struct {
	gzip   sync.Pool // *gzip.Reader
	zlib   sync.Pool // io.ReadCloser that is a zlib.Resetter
	zstd   sync.Pool // *zstd.Decoder
	snappy sync.Pool // *snappy.Reader (framing format)
	lz4    sync.Pool // *lz4.Reader
}

// decompression is a request body being decompressed.
type decompression struct {
	// r reads the decompressed body; for a snappy block it reads the
	// compressed body, which is decoded whole once read (block is set).
	r     io.Reader
	block bool
	// window is the memory the decompressor holds while it reads, beyond
	// the body it produces, taken from the in-flight budget.
	window int64
	// done returns the decompressor to its pool; it may be nil.
	done func()
}

func (d *decompression) close() {
	if d.done != nil {
		d.done()
		d.done = nil
	}
}

// knownCoding reports whether coding, lowercase, is a content coding
// accepted over OTLP/HTTP.
func knownCoding(coding string) bool {
	for _, c := range httpCodings {
		if c == coding {
			return true
		}
	}
	return false
}

// open starts decompressing src, a body in coding (one of httpCodings).
// Errors are those of the coding's header.
func (p *decoders) open(coding string, src io.Reader) (*decompression, error) {
	switch coding {
	case CodingGzip:
		zr, ok := p.gzip.Get().(*gzip.Reader)
		var err error
		if ok {
			err = zr.Reset(src)
		} else {
			zr, err = gzip.NewReader(src)
		}
		if err != nil {
			if zr != nil {
				p.putGzip(zr)
			}
			return nil, err
		}
		return &decompression{r: zr, done: func() { p.putGzip(zr) }}, nil
	case CodingZlib, CodingDeflate:
		zr, ok := p.zlib.Get().(io.ReadCloser)
		var err error
		if ok {
			err = zr.(zlib.Resetter).Reset(src, nil)
		} else {
			zr, err = zlib.NewReader(src)
		}
		if err != nil {
			if zr != nil {
				p.putZlib(zr)
			}
			return nil, err
		}
		return &decompression{r: zr, done: func() { p.putZlib(zr) }}, nil
	case CodingZstd:
		head, src, err := peek(src, zstd.HeaderMaxSize)
		if err != nil {
			return nil, err
		}
		window, err := zstdWindow(head)
		if err != nil {
			return nil, err
		}
		zr, ok := p.zstd.Get().(*zstd.Decoder)
		if ok {
			err = zr.Reset(src)
		} else {
			zr, err = zstd.NewReader(src, zstdDecoderOptions...)
		}
		if err != nil {
			if zr != nil {
				p.putZstd(zr)
			}
			return nil, err
		}
		return &decompression{r: zr, window: window, done: func() { p.putZstd(zr) }}, nil
	case CodingSnappy, CodingSnappyFramed:
		if coding == CodingSnappy {
			head, rest, err := peek(src, len(snappyStreamID))
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(head, snappyStreamID) {
				return &decompression{r: rest, block: true}, nil
			}
			src = rest
		}
		sr, ok := p.snappy.Get().(*snappy.Reader)
		if ok {
			sr.Reset(src)
		} else {
			sr = snappy.NewReader(src)
		}
		return &decompression{r: sr, done: func() { sr.Reset(emptyReader{}); p.snappy.Put(sr) }}, nil
	case CodingLZ4:
		lr, ok := p.lz4.Get().(*lz4.Reader)
		if ok {
			lr.Reset(src)
		} else {
			lr = lz4.NewReader(src)
		}
		return &decompression{r: lr, done: func() { lr.Reset(emptyReader{}); p.lz4.Put(lr) }}, nil
	}
	return nil, fmt.Errorf("%w %q", errUnsupportedEncoding, coding)
}

// putGzip keeps zr for reuse, without the request body it read.
func (p *decoders) putGzip(zr *gzip.Reader) {
	_ = zr.Reset(emptyReader{})
	p.gzip.Put(zr)
}

func (p *decoders) putZlib(zr io.ReadCloser) {
	// The reset fails (no header to read) but drops the body all the same.
	_ = zr.(zlib.Resetter).Reset(emptyReader{}, nil)
	p.zlib.Put(zr)
}

func (p *decoders) putZstd(zr *zstd.Decoder) {
	_ = zr.Reset(emptyReader{})
	p.zstd.Put(zr)
}

// peek reads up to n bytes of src, fewer only at its end, and returns them
// with a reader of the whole of src.
func peek(src io.Reader, n int) ([]byte, io.Reader, error) {
	head := make([]byte, n)
	m, err := io.ReadFull(src, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	head = head[:m]
	return head, io.MultiReader(bytes.NewReader(head), src), nil
}

// zstdWindow returns the window that the first frame in head declares
// (its content size, for a single segment) and its blocks, the memory a
// decoder will hold; zstdMaxWindow when head does not tell. A window over
// zstdMaxWindow is an error.
func zstdWindow(head []byte) (int64, error) {
	var h zstd.Header
	if err := h.Decode(head); err != nil || h.Skippable {
		// Not a frame the decoder will accept, or not the first one: the
		// decoder says what is wrong, within the largest window.
		return zstdMaxWindow + zstdBlockSpace, nil
	}
	window := h.WindowSize
	if h.SingleSegment {
		window = max(h.FrameContentSize, zstd.MinWindowSize)
	}
	if window > zstdMaxWindow {
		return 0, fmt.Errorf("zstd window of %d bytes, over the %d bytes of RFC 9659", window, zstdMaxWindow)
	}
	return int64(window) + zstdBlockSpace, nil
}

// snappyBlockLen returns the length of the snappy block src once
// decoded; a block that decodes to more than limit is ErrTooLarge.
func snappyBlockLen(src []byte, limit int) (int, error) {
	n, err := snappy.DecodedLen(src)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: cannot decompress snappy body: %w", errMalformed, err)
	case n > limit:
		return 0, fmt.Errorf("%w: snappy body of %d bytes once decompressed, over the limit of %d", ErrTooLarge, n, limit)
	}
	return n, nil
}

// The gRPC compressors beside gzip: zstd and snappy (the framing format),
// which the Collector's OTLP exporter sends. gRPC bounds what it reads from
// them at the server's largest message (MaxRequestBytes), as it does for
// gzip; zstd windows are bounded by zstdMaxWindow.
func init() {
	grpcencoding.RegisterCompressor(&grpcZstd{})
	grpcencoding.RegisterCompressor(&grpcSnappy{})
}

// grpcZstd is the zstd gRPC compressor.
type grpcZstd struct {
	enc, dec sync.Pool
}

func (*grpcZstd) Name() string { return CodingZstd }

// grpcZstdWindow is the window of the zstd answers this server sends: its
// answers are small.
const grpcZstdWindow = 512 << 10

func (c *grpcZstd) Compress(w io.Writer) (io.WriteCloser, error) {
	e, ok := c.enc.Get().(*zstd.Encoder)
	if ok {
		e.Reset(w)
	} else {
		var err error
		if e, err = zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(grpcZstdWindow)); err != nil {
			return nil, err
		}
	}
	return &pooledWriter{WriteCloser: e, put: func() { e.Reset(nil); c.enc.Put(e) }}, nil
}

func (c *grpcZstd) Decompress(r io.Reader) (io.Reader, error) {
	d, ok := c.dec.Get().(*zstd.Decoder)
	var err error
	if ok {
		err = d.Reset(r)
	} else {
		d, err = zstd.NewReader(r, zstdDecoderOptions...)
	}
	if err != nil {
		return nil, err
	}
	return &pooledReader{Reader: d, put: func() { _ = d.Reset(emptyReader{}); c.dec.Put(d) }}, nil
}

// grpcSnappy is the snappy gRPC compressor, in the framing format.
type grpcSnappy struct {
	enc, dec sync.Pool
}

func (*grpcSnappy) Name() string { return CodingSnappy }

func (c *grpcSnappy) Compress(w io.Writer) (io.WriteCloser, error) {
	e, ok := c.enc.Get().(*snappy.Writer)
	if ok {
		e.Reset(w)
	} else {
		e = snappy.NewBufferedWriter(w)
	}
	return &pooledWriter{WriteCloser: e, put: func() { e.Reset(nil); c.enc.Put(e) }}, nil
}

func (c *grpcSnappy) Decompress(r io.Reader) (io.Reader, error) {
	d, ok := c.dec.Get().(*snappy.Reader)
	if ok {
		d.Reset(r)
	} else {
		d = snappy.NewReader(r)
	}
	return &pooledReader{Reader: d, put: func() { d.Reset(emptyReader{}); c.dec.Put(d) }}, nil
}

// pooledWriter returns its compressor to its pool once closed.
type pooledWriter struct {
	io.WriteCloser
	put func()
}

func (w *pooledWriter) Close() error {
	err := w.WriteCloser.Close()
	if w.put != nil {
		w.put()
		w.put = nil
	}
	return err
}

// pooledReader returns its decompressor to its pool once closed, which
// gRPC does once it has read the message.
type pooledReader struct {
	io.Reader
	put func()
}

func (r *pooledReader) Close() error {
	if r.put != nil {
		r.put()
		r.put = nil
		r.Reader = emptyReader{}
	}
	return nil
}

// codingList is httpCodings for messages: "gzip, zstd, … or none".
func codingList() string { return strings.Join(httpCodings, ", ") + " or none" }
