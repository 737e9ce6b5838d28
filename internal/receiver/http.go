package receiver

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/snappy"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// OTLP/HTTP paths and media types (opentelemetry-proto
// docs/specification.md, "OTLP/HTTP").
const (
	PathLogs   = "/v1/logs"
	PathTraces = "/v1/traces"

	MediaProto = "application/x-protobuf"
	MediaJSON  = "application/json"
)

// encoding is the body encoding of a request, and of its answer.
type encoding uint8

const (
	encodingProto encoding = iota + 1
	encodingJSON
)

func (e encoding) mediaType() string {
	if e == encodingJSON {
		return MediaJSON
	}
	return MediaProto
}

// parseEncoding maps a Content-Type header to an encoding.
func parseEncoding(contentType string) (encoding, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, false
	}
	switch mt {
	case MediaProto:
		return encodingProto, true
	case MediaJSON:
		return encodingJSON, true
	}
	return 0, false
}

// Errors of the HTTP transport only.
var (
	errUnsupportedEncoding = errors.New("unsupported content encoding")
	errMalformed           = errors.New("malformed request")
)

func (s *Server) newMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathLogs, s.serveLogs)
	mux.HandleFunc(PathTraces, s.serveTraces)
	return mux
}

// otlpMessage is an OTLP export request or response of any signal, as
// pdata encodes it.
type otlpMessage interface {
	MarshalProto() ([]byte, error)
	UnmarshalProto([]byte) error
	MarshalJSON() ([]byte, error)
	UnmarshalJSON([]byte) error
}

// serveLogs serves POST /v1/logs. A protobuf body is decoded straight
// into events (otelschema.DecodeLogsProto), JSON through pdata.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	enc, body, ok := s.readExport(w, r, PathLogs)
	if !ok {
		return
	}
	var (
		res otelschema.Result
		err error
	)
	if enc == encodingProto {
		res, err = s.ingestLogsProto(r.Context(), body.Bytes(), func() { s.putBody(body) })
	} else {
		req := plogotlp.NewExportRequest()
		if !s.unmarshal(w, r, enc, body, req) {
			return
		}
		res, err = s.ingestLogs(r.Context(), req.Logs())
	}
	switch {
	case errors.Is(err, errMalformed):
		s.writeStatus(w, enc, http.StatusBadRequest, codes.InvalidArgument, err.Error())
		return
	case err != nil:
		s.writeIngestError(w, r, enc, err)
		return
	}
	s.writeResponse(w, enc, logsResponse(res))
}

// readRequest counts an export request to path and decodes its body into
// req. When the request cannot be decoded it answers it, counts the
// refusal and returns false; otherwise it returns the request's encoding,
// in which the answer is due.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, path string, req otlpMessage) (encoding, bool) {
	enc, body, ok := s.readExport(w, r, path)
	return enc, ok && s.unmarshal(w, r, enc, body, req)
}

// readExport counts an export request to path and reads its body into a
// pooled buffer, which the caller returns with putBody. When the request
// cannot be read it answers it, counts the refusal and returns false;
// otherwise it returns the request's encoding, in which the answer is due.
func (s *Server) readExport(w http.ResponseWriter, r *http.Request, path string) (encoding, *body, bool) {
	s.stats.requests.Add(1)
	if r.Method != http.MethodPost {
		s.stats.refusedMethod.Add(1)
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, fmt.Sprintf("method %s not allowed on %s: use POST", r.Method, path), http.StatusMethodNotAllowed)
		return 0, nil, false
	}
	enc, ok := parseEncoding(r.Header.Get("Content-Type"))
	if !ok {
		s.stats.refusedMediaType.Add(1)
		http.Error(w, fmt.Sprintf("unsupported content type %q: use %s or %s", r.Header.Get("Content-Type"), MediaProto, MediaJSON), http.StatusUnsupportedMediaType)
		return 0, nil, false
	}
	body, err := s.readBody(w, r)
	if err != nil {
		switch {
		case errors.Is(err, ErrInflightFull):
			s.writeIngestError(w, r, enc, err)
		case errors.Is(err, ErrTooLarge):
			s.stats.refusedTooLarge.Add(1)
			s.writeStatus(w, enc, http.StatusRequestEntityTooLarge, codes.InvalidArgument, err.Error())
		case errors.Is(err, errUnsupportedEncoding):
			s.stats.refusedMediaType.Add(1)
			s.writeStatus(w, enc, http.StatusUnsupportedMediaType, codes.InvalidArgument, err.Error())
		default:
			s.stats.refusedMalformed.Add(1)
			s.writeStatus(w, enc, http.StatusBadRequest, codes.InvalidArgument, err.Error())
		}
		return 0, nil, false
	}
	return enc, body, true
}

// unmarshal decodes body, in enc, into req and returns the body to the
// pool. When body cannot be decoded it answers the request, counts the
// refusal and returns false.
func (s *Server) unmarshal(w http.ResponseWriter, r *http.Request, enc encoding, body *body, req otlpMessage) bool {
	var err error
	if enc == encodingJSON {
		// pdata's JSON decoding holds about twice the body again while it
		// runs (the unescaped strings, then the pdata values): that too
		// comes out of the in-flight budget.
		extra := jsonDecodeFactor * int64(body.Len())
		if !s.inflight.take(extra) {
			err := s.inflight.errFull(extra)
			s.putBody(body)
			s.writeIngestError(w, r, enc, err)
			return false
		}
		defer s.inflight.give(extra)
		if jsonTooDeep(body.Bytes(), maxJSONDepth) {
			err = fmt.Errorf("objects and arrays nested more than %d levels deep", maxJSONDepth)
		} else {
			err = req.UnmarshalJSON(body.Bytes())
		}
	} else {
		err = req.UnmarshalProto(body.Bytes())
	}
	n := body.Len()
	// pdata copied what it keeps: the body can serve another request.
	s.putBody(body)
	if err != nil {
		s.stats.refusedMalformed.Add(1)
		s.writeStatus(w, enc, http.StatusBadRequest, codes.InvalidArgument, fmt.Sprintf("cannot decode request of %d bytes: %v", n, err))
		return false
	}
	return true
}

// writeIngestError answers a request whose events were not stored.
func (s *Server) writeIngestError(w http.ResponseWriter, r *http.Request, enc encoding, err error) {
	rf := s.refuse(r.Context(), err)
	if rf.retry {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(s.cfg.RetryAfter)))
	}
	s.writeStatus(w, enc, rf.status, rf.code, err.Error())
}

// writeResponse answers a request whose events are stored with resp, in
// the request's encoding.
func (s *Server) writeResponse(w http.ResponseWriter, enc encoding, resp otlpMessage) {
	var (
		out []byte
		err error
	)
	if enc == encodingJSON {
		out, err = resp.MarshalJSON()
	} else {
		out, err = resp.MarshalProto()
	}
	if err != nil {
		// The events are stored; the client may retry and send duplicates.
		s.stats.refusedInternal.Add(1)
		s.writeStatus(w, enc, http.StatusInternalServerError, codes.Internal, fmt.Sprintf("cannot encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", enc.mediaType())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// maxPooledBody bounds the capacity of the body buffers kept for reuse.
const maxPooledBody = 4 << 20

// body is a request body read into a pooled buffer, with the bytes of the
// in-flight budget it holds until putBody.
type body struct {
	b    []byte
	held int64
}

// Bytes returns the body, valid until putBody.
func (b *body) Bytes() []byte { return b.b }

// Len returns the body's length.
func (b *body) Len() int { return len(b.b) }

// minBodyGrowth is the smallest growth of a body's buffer.
const minBodyGrowth = 32 << 10

// readFrom reads src into b until its end or max+1 bytes (one past the
// limit tells a body of exactly the limit from a larger one). The buffer
// doubles as it fills, and each growth is taken from bud before it is
// allocated, so that a request that does not fit is refused without the
// memory it would have taken; the bytes read into a buffer that was
// already there are taken as they come.
func (b *body) readFrom(src io.Reader, max int, bud *budget) error {
	for {
		if len(b.b) == cap(b.b) {
			if len(b.b) > max {
				return nil
			}
			size := min(cap(b.b)+len(b.b)+minBodyGrowth, max+1)
			if more := int64(size) - b.held; more > 0 {
				if !bud.take(more) {
					return bud.errFull(more)
				}
				b.held += more
			}
			grown := make([]byte, len(b.b), size)
			copy(grown, b.b)
			b.b = grown
		}
		n, err := src.Read(b.b[len(b.b):cap(b.b)])
		b.b = b.b[:len(b.b)+n]
		if more := int64(len(b.b)) - b.held; more > 0 {
			if !bud.take(more) {
				return bud.errFull(more)
			}
			b.held += more
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readBody reads the request body, decompressing it as its
// Content-Encoding says, into a pooled buffer that the caller returns with
// putBody. Both the body as sent and as decompressed are limited to
// MaxRequestBytes, and both, with the decompressor's own window, are taken
// from the in-flight budget as they are read.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*body, error) {
	limit := s.cfg.MaxRequestBytes
	if r.ContentLength > int64(limit) {
		return nil, fmt.Errorf("%w: body of %d bytes, over the limit of %d", ErrTooLarge, r.ContentLength, limit)
	}
	// MaxBytesReader fails the read past the limit and closes the
	// connection rather than reading the rest.
	var src io.Reader = http.MaxBytesReader(w, r.Body, int64(limit))
	coding := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	if coding == "identity" {
		coding = ""
	}
	if coding != "" && !knownCoding(coding) {
		return nil, fmt.Errorf("%w %q: use %s", errUnsupportedEncoding, coding, codingList())
	}
	var dec *decompression
	if coding != "" {
		var err error
		if dec, err = s.decoders.open(coding, src); err != nil {
			return nil, bodyError(err, limit, "cannot read "+coding+" header: %w")
		}
		defer dec.close()
		if dec.window > 0 {
			if !s.inflight.take(dec.window) {
				return nil, s.inflight.errFull(dec.window)
			}
			defer s.inflight.give(dec.window)
		}
		src = dec.r
	}
	buf := s.getBody()
	// The body as sent is reserved before it is read; what decompression
	// adds, as it is read.
	if r.ContentLength > 0 {
		if !s.inflight.take(r.ContentLength) {
			s.putBody(buf)
			return nil, s.inflight.errFull(r.ContentLength)
		}
		buf.held = r.ContentLength
	}
	if (dec == nil || dec.block) && r.ContentLength > 0 && cap(buf.b) < int(r.ContentLength)+1 {
		// Room for the whole body and the byte that tells it is over, in
		// one allocation, the body as sent being reserved already.
		buf.b = make([]byte, 0, r.ContentLength+1)
	}
	err := buf.readFrom(src, limit, s.inflight)
	if err == nil && buf.Len() > limit {
		err = fmt.Errorf("%w: body over the limit of %d bytes once decompressed", ErrTooLarge, limit)
	}
	if err == nil && dec != nil && dec.block {
		var out *body
		out, err = s.decodeSnappyBlock(buf, limit)
		s.putBody(buf)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if err != nil {
		s.putBody(buf)
		if errors.Is(err, ErrInflightFull) {
			return nil, err
		}
		if coding != "" {
			return nil, bodyError(err, limit, "cannot decompress "+coding+" body: %w")
		}
		return nil, bodyError(err, limit, "cannot read body: %w")
	}
	return buf, nil
}

// decodeSnappyBlock decodes the snappy block in compressed into a pooled
// buffer of its own, whose length, at most limit, it takes from the
// in-flight budget before it allocates it.
func (s *Server) decodeSnappyBlock(compressed *body, limit int) (*body, error) {
	n, err := snappyBlockLen(compressed.Bytes(), limit)
	if err != nil {
		return nil, err
	}
	out := s.getBody()
	if !s.inflight.take(int64(n)) {
		s.putBody(out)
		return nil, s.inflight.errFull(int64(n))
	}
	out.held = int64(n)
	if cap(out.b) < n {
		out.b = make([]byte, n)
	}
	decoded, err := snappy.Decode(out.b[:n], compressed.Bytes())
	if err != nil {
		s.putBody(out)
		return nil, fmt.Errorf("%w: cannot decompress snappy body: %w", errMalformed, err)
	}
	out.b = decoded
	return out, nil
}

// bodyError classifies an error met while reading a body.
func bodyError(err error, limit int, format string) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, ErrTooLarge):
		return err
	case errors.As(err, &mbe):
		return fmt.Errorf("%w: body over the limit of %d bytes", ErrTooLarge, limit)
	}
	return fmt.Errorf("%w: "+format, errMalformed, err)
}

func (s *Server) getBody() *body {
	if b, ok := s.bodies.Get().(*body); ok {
		return b
	}
	return new(body)
}

// putBody returns b's budget and keeps b for reuse.
func (s *Server) putBody(b *body) {
	s.inflight.give(b.held)
	b.held = 0
	if cap(b.b) > maxPooledBody {
		return
	}
	b.b = b.b[:0]
	s.bodies.Put(b)
}

// emptyReader is an io.Reader at its end.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, io.EOF }

// writeStatus answers with a google.rpc.Status in the request's encoding,
// as OTLP/HTTP wants for every failure.
func (s *Server) writeStatus(w http.ResponseWriter, enc encoding, httpStatus int, code codes.Code, msg string) {
	// Messages may quote the body; proto strings must be valid UTF-8.
	st := &statuspb.Status{Code: int32(code), Message: strings.ToValidUTF8(msg, "\uFFFD")}
	var (
		out []byte
		err error
	)
	if enc == encodingJSON {
		out, err = protojson.Marshal(st)
	} else {
		out, err = proto.Marshal(st)
	}
	if err != nil {
		http.Error(w, msg, httpStatus)
		return
	}
	w.Header().Set("Content-Type", enc.mediaType())
	w.WriteHeader(httpStatus)
	_, _ = w.Write(out)
}
