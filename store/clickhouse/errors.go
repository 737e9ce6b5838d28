package clickhouse

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/mcpdrift/mcpdrift/store"
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
		279: true, // ALL_CONNECTION_TRIES_FAILED (a shard is down)
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

// unreachableCodes are the server errors that say that a server or a
// shard cannot be reached.
var unreachableCodes = map[int32]bool{
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	279: true, // ALL_CONNECTION_TRIES_FAILED
	285: true, // TOO_FEW_LIVE_REPLICAS
}

// unavailable marks err with store.ErrUnavailable when it says that the
// server, or a shard behind it, cannot be reached.
func unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		if unreachableCodes[ex.Code] {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	if isTransient(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}
