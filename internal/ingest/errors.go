package ingest

import (
	"errors"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
)

// Sentinel errors. Those a request can be refused with are the receiver's:
// it answers each as its class (receiver/refuse.go).
var (
	// ErrInvalidConfig is wrapped by the errors of Config.Validate.
	ErrInvalidConfig = errors.New("invalid ingest configuration")
	// ErrOverloaded refuses a request whose events would take the pending
	// events past Config.MaxPendingEvents. Retryable.
	ErrOverloaded = receiver.ErrOverloaded
	// ErrShuttingDown refuses a request that arrives while the ingester is
	// shutting down. Retryable.
	ErrShuttingDown = receiver.ErrShuttingDown
	// ErrInvalidData marks a permanent store error caused by the request's
	// own events. Not retryable.
	ErrInvalidData = receiver.ErrInvalidData
	// ErrStoreRefused marks a permanent store error that is not attributable
	// to one request. Not retryable, and not the client's fault.
	ErrStoreRefused = receiver.ErrStoreRefused
	// ErrTooLarge refuses a request body over Config.MaxRequestBytes.
	ErrTooLarge = receiver.ErrTooLarge
	// ErrSpoolFull refuses a request that the store could not take in time
	// and the spool had no room for. Retryable.
	ErrSpoolFull = receiver.ErrSpoolFull
	// ErrInflightFull refuses a request whose body does not fit in
	// Config.MaxInflightBytes. Retryable.
	ErrInflightFull = receiver.ErrInflightFull
)
