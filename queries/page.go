package queries

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Page selects one page of a paginated report.
type Page struct {
	// Limit is the number of rows per page: DefaultPageLimit when zero, at
	// most MaxPageLimit.
	Limit int
	// After is the Next cursor of the previous page; empty for the first.
	After string
}

// Page limits.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// cursor is the position after which a page starts: the sort key of the
// last row of the previous page.
type cursor struct {
	Time    time.Time
	EventID uint64
	Kind    string
	set     bool
}

const cursorVersion = "v1"

func (c cursor) encode() string {
	s := strings.Join([]string{cursorVersion, strconv.FormatInt(c.Time.UnixNano(), 10), strconv.FormatUint(c.EventID, 10), c.Kind}, "|")
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodeCursor(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
	}
	parts := strings.SplitN(string(raw), "|", 4)
	if len(parts) != 4 || parts[0] != cursorVersion {
		return cursor{}, fmt.Errorf("%w: unknown format", ErrInvalidCursor)
	}
	ns, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return cursor{}, fmt.Errorf("%w: cannot parse time: %w", ErrInvalidCursor, err)
	}
	id, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return cursor{}, fmt.Errorf("%w: cannot parse event id: %w", ErrInvalidCursor, err)
	}
	return cursor{Time: time.Unix(0, ns).UTC(), EventID: id, Kind: parts[3], set: true}, nil
}

func (p Page) resolve() (cursor, int, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultPageLimit
	case limit < 0 || limit > MaxPageLimit:
		return cursor{}, 0, fmt.Errorf("%w: page limit %d not in 1..%d", ErrInvalidFilter, limit, MaxPageLimit)
	}
	if p.After == "" {
		return cursor{}, limit, nil
	}
	c, err := decodeCursor(p.After)
	return c, limit, err
}

// bind adds the cursor and the row limit to a call; the cursor's
// condition is rendered when it is set.
func (c cursor) bind(q call, limit int) call {
	t := c.Time
	if !c.set {
		t = time.Unix(0, 0)
	}
	q.params["after_id"] = strconv.FormatUint(c.EventID, 10)
	q.params.String("after_kind", c.Kind)
	q.params.Time("after_time", t).Int("limit", int64(limit))
	q.shape.After = c.set
	return q
}
