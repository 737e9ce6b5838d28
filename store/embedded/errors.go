package embedded

import "errors"

// Sentinel errors.
var (
	errClosed = errors.New("embedded store is closed")
)
