package clickhouse

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Server error codes (ClickHouse src/Common/ErrorCodes.cpp) that decide how
// an insert error is handled.
var (
	// permanentCodes are errors in the data itself: a retry sends the same
	// rows and fails the same way.
	permanentCodes = map[int32]bool{
		6:   true, // CANNOT_PARSE_TEXT
		27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
		36:  true, // BAD_ARGUMENTS
		38:  true, // CANNOT_PARSE_DATE
		41:  true, // CANNOT_PARSE_DATETIME
		53:  true, // TYPE_MISMATCH
		69:  true, // ARGUMENT_OUT_OF_BOUND
		70:  true, // CANNOT_CONVERT_TYPE
		72:  true, // CANNOT_PARSE_NUMBER
		117: true, // INCORRECT_DATA
		131: true, // TOO_LARGE_STRING_SIZE
	}
	// transientCodes are worth retrying at once, with the same token.
	transientCodes = map[int32]bool{
		3:   true, // UNEXPECTED_END_OF_FILE
		159: true, // TIMEOUT_EXCEEDED
		202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
		209: true, // SOCKET_TIMEOUT
		210: true, // NETWORK_ERROR
		242: true, // TABLE_IS_READ_ONLY (a replica lost its Keeper session)
		252: true, // TOO_MANY_PARTS
		285: true, // TOO_FEW_LIVE_REPLICAS
		319: true, // UNKNOWN_STATUS_OF_INSERT
		999: true, // KEEPER_EXCEPTION
	}
)

// isPermanent reports whether err is an error in the data that no retry can
// fix.
func isPermanent(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && permanentCodes[ex.Code]
}

// isTransient reports whether retrying err at once may succeed: a dropped
// or refused connection, or one of transientCodes. Context errors are not.
func isTransient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return transientCodes[ex.Code]
	}
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ne)
}
