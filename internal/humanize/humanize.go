// Package humanize writes figures as the reports' sentences and tables
// write them for people: shares as percentages, session ages as short
// durations. The retirement reasons, the CLI's tables, the release gate's
// summary and the API's description of its thresholds use it, so that one
// figure reads the same everywhere.
package humanize

import "fmt"

// Percent writes a ratio as a percentage with two decimals: 0.0123 is
// "1.23%".
func Percent(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// Age writes seconds as a short duration, truncated to its unit: seconds
// below 2 minutes, minutes below 2 hours, hours below 3 days, then days
// (90s, 45m, 30h, 3d).
func Age(s int64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%ds", s)
	case s < 2*3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 72*3600:
		return fmt.Sprintf("%dh", s/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// Plural is one when n is 1, else many: "1 call", "2 calls".
func Plural[N ~int | ~int64 | ~uint64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
