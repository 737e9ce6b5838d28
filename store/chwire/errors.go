package chwire

import "errors"

// Sentinel errors.
var (
	// errTruncated marks RowBinary data that ends inside a value, or a
	// length that runs past its end.
	errTruncated = errors.New("truncated RowBinary data")
	// errCorrupt marks RowBinary data that no engine writes.
	errCorrupt = errors.New("corrupt RowBinary data")
)
