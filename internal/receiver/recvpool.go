package receiver

import (
	"math/bits"
	"sync"
)

// recvPool is the pool of the buffers an OTLP/gRPC request is gathered into
// when it arrives in pieces (grpcCodec.Unmarshal): classes of power-of-two
// capacities, as in gRPC's default pool, but a buffer is handed out as it
// was left, not cleared. Gathering writes every byte of the request, and
// the decoder reads no further, so clearing — the class's whole capacity,
// 1 MiB for an export of 400 KB — bought nothing.
type recvPool struct {
	classes [recvPoolClasses]sync.Pool
}

const (
	// recvPoolMinShift is the smallest class, 4 KiB.
	recvPoolMinShift = 12
	// recvPoolClasses reaches 64 MiB, the default -otlp.max-request-bytes;
	// larger requests get a buffer of their own.
	recvPoolClasses = 15
)

// Get returns a buffer of length bytes, of unspecified content.
func (p *recvPool) Get(length int) *[]byte {
	c := recvClass(length)
	if c < 0 {
		b := make([]byte, length)
		return &b
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		*b = (*b)[:length]
		return b
	}
	b := make([]byte, length, 1<<(c+recvPoolMinShift))
	return &b
}

// Put takes back a buffer that Get returned; others are dropped.
func (p *recvPool) Put(b *[]byte) {
	c := recvClass(cap(*b))
	if c < 0 || cap(*b) != 1<<(c+recvPoolMinShift) {
		return
	}
	p.classes[c].Put(b)
}

// recvClass returns the class whose buffers hold n bytes, or -1 when n is
// beyond the largest.
func recvClass(n int) int {
	if n <= 1<<recvPoolMinShift {
		return 0
	}
	c := bits.Len(uint(n-1)) - recvPoolMinShift
	if c >= recvPoolClasses {
		return -1
	}
	return c
}
