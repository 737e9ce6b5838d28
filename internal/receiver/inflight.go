package receiver

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrInflightFull refuses a request whose body does not fit in the bytes
// the ingester reads and decodes at once (Config.MaxInflightBytes): HTTP
// 503 with Retry-After, gRPC RESOURCE_EXHAUSTED with RetryInfo.
var ErrInflightFull = errors.New("too many request bytes in flight")

// budget bounds the bytes of request bodies held at once — as received,
// and once decompressed — across both protocols and every tenant, so that
// a flood of large or compressed requests is refused before it is read,
// not after it has filled memory. Nil means unbounded.
type budget struct {
	limit int64
	used  atomic.Int64
}

func newBudget(limit int64) *budget {
	if limit <= 0 {
		return nil
	}
	return &budget{limit: limit}
}

// take reserves n bytes; it reports false, reserving nothing, when they
// do not fit.
func (b *budget) take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// give returns n bytes.
func (b *budget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// full reports whether nothing more fits now.
func (b *budget) full() bool { return b != nil && b.used.Load() >= b.limit }

// errFull is the refusal of n bytes.
func (b *budget) errFull(n int64) error {
	return fmt.Errorf("%w: %d bytes wanted, %d of %d in use", ErrInflightFull, n, b.used.Load(), b.limit)
}

// jsonDecodeFactor is how many times its body's size more an OTLP/JSON
// request holds of the in-flight budget while pdata decodes it.
const jsonDecodeFactor = 2

// maxJSONDepth bounds the nesting of an OTLP/JSON request's objects and
// arrays. pdata's JSON decoder has no limit of its own, where its protobuf
// decoder stops at 100 levels of KeyValue, AnyValue, ArrayValue and
// KeyValueList: 49 arrays nested in an attribute pass there, and take 160
// levels in JSON with the request's envelope.
const maxJSONDepth = 200

// jsonTooDeep reports whether the JSON text b nests objects and arrays
// deeper than max, skipping strings; it does not validate b.
func jsonTooDeep(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return false
}
