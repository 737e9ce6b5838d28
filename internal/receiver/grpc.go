package receiver

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcencoding "google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// grpcLogs serves the OTLP/gRPC LogsService. gRPC itself receives the
// request, decompresses it (gzip, zstd, snappy: compression.go) and refuses
// messages over MaxRequestBytes, as sent or decompressed, with
// RESOURCE_EXHAUSTED; the server's codec (grpcCodec) hands the request's
// bytes over undecoded, and otelschema decodes them straight into events.
type grpcLogs struct {
	s *Server
}

// rawExporter serves an OTLP Export method over raw messages.
type rawExporter interface {
	export(ctx context.Context, req *rawRequest) (rawResponse, error)
}

// rawServiceDesc is an OTLP collector service with its Export method over
// raw messages: the handler receives the request's bytes and the exporter
// decodes them, so that a malformed request is its INVALID_ARGUMENT, not
// the codec's INTERNAL.
func rawServiceDesc(service, protoFile string) grpc.ServiceDesc {
	full := "/" + service + "/Export"
	handler := func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		req := new(rawRequest)
		if err := dec(req); err != nil {
			return nil, err
		}
		defer req.free()
		export := func(ctx context.Context, req any) (any, error) {
			return srv.(rawExporter).export(ctx, req.(*rawRequest))
		}
		if interceptor == nil {
			return export(ctx, req)
		}
		return interceptor(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: full}, export)
	}
	return grpc.ServiceDesc{
		ServiceName: service,
		HandlerType: (*rawExporter)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: handler}},
		Metadata:    protoFile,
	}
}

// The OTLP services, from opentelemetry-proto's collector/*/v1/*.proto.
var (
	logsServiceDesc   = rawServiceDesc("opentelemetry.proto.collector.logs.v1.LogsService", "opentelemetry/proto/collector/logs/v1/logs_service.proto")
	tracesServiceDesc = rawServiceDesc("opentelemetry.proto.collector.trace.v1.TraceService", "opentelemetry/proto/collector/trace/v1/trace_service.proto")
)

// admit counts a gRPC export and reserves its bytes in the in-flight
// budget; release frees gRPC's buffer and returns the bytes, once.
func (s *Server) admit(ctx context.Context, req *rawRequest) (release func(), err error) {
	s.stats.requests.Add(1)
	n := int64(len(req.bytes()))
	if !s.inflight.take(n) {
		req.free()
		return nil, s.grpcStatus(ctx, s.inflight.errFull(n))
	}
	released := false
	return func() {
		if !released {
			released = true
			req.free()
			s.inflight.give(n)
		}
	}, nil
}

// export serves one Export call.
func (g *grpcLogs) export(ctx context.Context, req *rawRequest) (rawResponse, error) {
	s := g.s
	release, err := s.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := s.ingestLogsProto(ctx, req.bytes(), release)
	switch {
	case errors.Is(err, errMalformed):
		return nil, status.Error(codes.InvalidArgument, err.Error())
	case err != nil:
		return nil, s.grpcStatus(ctx, err)
	}
	return marshalResponse(s, logsResponse(res))
}

// rawRequest is an OTLP/gRPC request as its protobuf bytes: a reference to
// gRPC's receive buffer, held until free.
type rawRequest struct {
	buf mem.Buffer
}

// bytes returns the request's bytes, valid until free.
func (r *rawRequest) bytes() []byte {
	if r.buf == nil {
		return nil
	}
	return r.buf.ReadOnlyData()
}

// free releases gRPC's buffer; calls after the first do nothing.
func (r *rawRequest) free() {
	if r.buf != nil {
		r.buf.Free()
		r.buf = nil
	}
}

// rawResponse is an OTLP/gRPC answer as its protobuf bytes.
type rawResponse []byte

// grpcCodec is the codec of the ingester's gRPC server: it hands a
// rawRequest its bytes, a reference to gRPC's buffer rather than a copy
// when the message is in one piece, and sends a rawResponse as it is. Every
// other message (the TraceService's, health checks) goes to the codec
// registered for protobuf.
type grpcCodec struct {
	proto grpcencoding.CodecV2
	pool  *recvPool
}

func newGRPCCodec() grpcCodec {
	return grpcCodec{proto: grpcencoding.GetCodecV2(proto.Name), pool: new(recvPool)}
}

func (c grpcCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(rawResponse); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return c.proto.Marshal(v)
}

func (c grpcCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawRequest); ok {
		r.buf = data.MaterializeToBuffer(c.pool)
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

func (grpcCodec) Name() string { return proto.Name }

// grpcStatus turns an ingest error into a gRPC status error; retryable ones
// carry a RetryInfo detail, which OTLP clients honour.
func (s *Server) grpcStatus(ctx context.Context, err error) error {
	rf := s.refuse(ctx, err)
	st := status.New(rf.code, err.Error())
	if rf.retry {
		if d, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(s.cfg.RetryAfter)}); derr == nil {
			st = d
		}
	}
	return st.Err()
}
