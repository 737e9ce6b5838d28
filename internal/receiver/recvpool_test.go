package receiver

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/mem"
)

func TestRecvClass(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{0, 0}, {1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {8193, 2},
		{400_000, 7}, {1 << 20, 8}, {64 << 20, 14}, {64<<20 + 1, -1},
	} {
		if got := recvClass(tc.n); got != tc.class {
			t.Errorf("recvClass(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
}

func TestRecvPool(t *testing.T) {
	var p recvPool
	for _, n := range []int{0, 1, 4096, 5000, 400_000, 64<<20 + 1} {
		b := p.Get(n)
		if len(*b) != n {
			t.Fatalf("Get(%d): length %d", n, len(*b))
		}
		if c := recvClass(n); c >= 0 && cap(*b) != 1<<(c+recvPoolMinShift) {
			t.Errorf("Get(%d): capacity %d, want its class's %d", n, cap(*b), 1<<(c+recvPoolMinShift))
		}
		p.Put(b)
	}
	// A buffer that is not a class's is dropped, not handed out for a
	// request it may not fit.
	odd := make([]byte, 5000)
	p.Put(&odd)
	if b := p.Get(8192); cap(*b) != 8192 {
		t.Errorf("Get(8192) after a foreign Put: capacity %d", cap(*b))
	}
}

// TestCodecGathersDirtyBuffers: a request in pieces is gathered whole into
// a buffer that held another request, and nothing of that one shows.
func TestCodecGathersDirtyBuffers(t *testing.T) {
	c := newGRPCCodec()
	for round := range 3 {
		want := bytes.Repeat([]byte{byte(round + 1)}, 40_000-round*7_000)
		var pieces mem.BufferSlice
		for off := 0; off < len(want); off += 16 << 10 {
			pieces = append(pieces, mem.SliceBuffer(want[off:min(off+16<<10, len(want))]))
		}
		var r rawRequest
		if err := c.Unmarshal(pieces, &r); err != nil {
			t.Fatal(err)
		}
		if got := r.bytes(); !bytes.Equal(got, want) {
			t.Fatalf("round %d: gathered %d bytes, want %d equal to the pieces'", round, len(got), len(want))
		}
		b := r.buf.ReadOnlyData()
		// Dirty the buffer before it goes back, as a decoder could not.
		full := b[:cap(b)]
		for i := range full {
			full[i] = 0xff
		}
		r.free()
	}
}

// BenchmarkGatherRequest gathers an export of the bench's size (500
// records, about 400 KB) from 16 KiB pieces, as the transport delivers it,
// into a buffer of gRPC's default pool and of recvPool.
func BenchmarkGatherRequest(b *testing.B) {
	req := bytes.Repeat([]byte("x"), 390_000)
	var pieces mem.BufferSlice
	for off := 0; off < len(req); off += 16 << 10 {
		pieces = append(pieces, mem.SliceBuffer(req[off:min(off+16<<10, len(req))]))
	}
	for _, bc := range []struct {
		name string
		pool mem.BufferPool
	}{{"grpc-default", mem.DefaultBufferPool()}, {"recvPool", new(recvPool)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				buf := pieces.MaterializeToBuffer(bc.pool)
				buf.Free()
			}
		})
	}
}
