package receiver

import "errors"

// The errors a Sink returns that the receiver answers as their class
// (refuse.go); any other error of a Sink is retryable unless it wraps
// store.ErrPermanent. Package ingest returns them and re-exports them.
var (
	// ErrOverloaded refuses a request whose events would take the pending
	// events past the pipeline's bound. Retryable.
	ErrOverloaded = errors.New("ingester overloaded")
	// ErrShuttingDown refuses a request that arrives while the ingester is
	// shutting down. Retryable (on another instance, or after the restart).
	ErrShuttingDown = errors.New("ingester is shutting down")
	// ErrInvalidData marks a permanent store error caused by the request's
	// own events: they were refused when written on their own. Not retryable.
	ErrInvalidData = errors.New("events refused by the store")
	// ErrStoreRefused marks a permanent store error that is not attributable
	// to one request: the store refused every request of a batch, each
	// written on its own. Not retryable, and not the client's fault.
	ErrStoreRefused = errors.New("store refuses every batch")
	// ErrTooLarge refuses a request body over Config.MaxRequestBytes, as
	// received or once decompressed.
	ErrTooLarge = errors.New("request too large")
	// ErrSpoolFull refuses a request that the store could not take in time
	// and the spool had no room for (its size limit, or a full disk).
	// Retryable.
	ErrSpoolFull = errors.New("store slow or unavailable, and no room in the spool (its size limit or its disk)")
)
