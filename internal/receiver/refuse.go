package receiver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/mcpdrift/mcpdrift/store"
)

// refusal is how an error is answered, in both protocols.
type refusal struct {
	status int        // HTTP status
	code   codes.Code // gRPC code
	// retry tells the client to retry after Config.RetryAfter: the
	// Retry-After header, the RetryInfo detail.
	retry bool
}

// refuse classifies the error of a request whose context is ctx, and counts
// it. The classes follow the OTLP specification: retryable errors are 503 /
// UNAVAILABLE with a retry delay; data at fault is 400 / INVALID_ARGUMENT;
// what neither a retry nor the client can fix is 500 / INTERNAL.
func (s *Server) refuse(ctx context.Context, err error) refusal {
	c := &s.stats
	switch {
	case errors.Is(err, ErrOverloaded):
		c.refusedOverloaded.Add(1)
		return refusal{http.StatusServiceUnavailable, codes.Unavailable, true}
	case errors.Is(err, ErrSpoolFull):
		c.refusedSpoolFull.Add(1)
		return refusal{http.StatusServiceUnavailable, codes.Unavailable, true}
	case errors.Is(err, ErrInflightFull):
		c.refusedInflight.Add(1)
		return refusal{http.StatusServiceUnavailable, codes.ResourceExhausted, true}
	case errors.Is(err, ErrShuttingDown):
		c.refusedShuttingDown.Add(1)
		return refusal{http.StatusServiceUnavailable, codes.Unavailable, true}
	case errors.Is(err, ErrTooLarge):
		c.refusedTooLarge.Add(1)
		// RESOURCE_EXHAUSTED without RetryInfo: not retried.
		return refusal{http.StatusRequestEntityTooLarge, codes.ResourceExhausted, false}
	case errors.Is(err, ErrInvalidData):
		c.refusedInvalidData.Add(1)
		return refusal{http.StatusBadRequest, codes.InvalidArgument, false}
	case errors.Is(err, ErrStoreRefused), errors.Is(err, store.ErrPermanent):
		c.refusedInternal.Add(1)
		return refusal{http.StatusInternalServerError, codes.Internal, false}
	case ctx.Err() != nil:
		// The client went away or gave up; its events may still be stored.
		c.refusedCanceled.Add(1)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return refusal{http.StatusServiceUnavailable, codes.DeadlineExceeded, true}
		}
		return refusal{http.StatusServiceUnavailable, codes.Canceled, true}
	default:
		// The store contract: errors not marked permanent are retryable.
		c.refusedStoreRetryable.Add(1)
		return refusal{http.StatusServiceUnavailable, codes.Unavailable, true}
	}
}

// retryAfterSeconds is Config.RetryAfter rounded up to whole seconds, as the
// Retry-After header wants.
func retryAfterSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
