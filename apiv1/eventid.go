package apiv1

import (
	"fmt"
	"strconv"
)

// EventID is an event's 64-bit id. In JSON it is a string of decimal
// digits ("9969864168398893637"): ids use all 64 bits, and JavaScript,
// Grafana's transforms and jq read JSON numbers as float64, exact only up to
// 2^53. The store's decoders set it as the integer it is.
type EventID uint64

// MarshalJSON writes the id as a JSON string.
func (id EventID) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatUint(uint64(id), 10)), nil
}

// UnmarshalJSON reads the id from a JSON string, or from a number as
// clients written before ids were strings may send.
func (id *EventID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("event id %s: want decimal digits up to 2^64-1: %w", b, err)
	}
	*id = EventID(n)
	return nil
}
