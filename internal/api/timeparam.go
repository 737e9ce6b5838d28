package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a report time parameter: "now", an RFC 3339 time, a
// date (2026-11-30: its midnight, UTC), or a time relative to now such as
// "-7d", "-36h", "-90m" or "-30s".
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "now-"):
		rel := strings.TrimPrefix(strings.TrimPrefix(s, "now"), "-")
		d, err := parseDuration(rel)
		if err != nil {
			return time.Time{}, fmt.Errorf("invalid relative time %q: %w", s, err)
		}
		return now.Add(-d), nil
	}
	layout := time.RFC3339Nano
	if len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339 (2026-11-30T00:00:00Z), a date (2026-11-30, midnight UTC), now, or relative (-7d, -24h)", s)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("invalid time %q: want a time between %s and %s, the range the store's DateTime64(9) columns hold",
			s, minTime.Format(time.RFC3339), maxTime.Format(time.RFC3339))
	}
	return t.UTC(), nil
}

// The range of ClickHouse's DateTime64(9), the type of the events' times:
// a time outside it cannot be bound to a report's query.
var (
	minTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2262, 4, 11, 23, 47, 16, 0, time.UTC)
)

// parseDuration accepts Go durations and a day suffix ("7d").
func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 3650 {
			return 0, fmt.Errorf("want a whole number of days between 0 and 3650")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 7d, 24h or 90m")
	}
	return d, nil
}
