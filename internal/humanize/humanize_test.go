package humanize

import "testing"

func TestFigures(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Percent(0), "0.00%"}, {Percent(0.28187919463087246), "28.19%"}, {Age(59), "59s"}, {Percent(0.0123), "1.23%"}, {Percent(1), "100.00%"},
		{Age(0), "0s"}, {Age(119), "119s"}, {Age(120), "2m"}, {Age(7199), "119m"},
		{Plural(1, "call", "calls"), "call"}, {Plural(uint64(0), "call", "calls"), "calls"}, {Plural(int64(2), "is", "are"), "are"},
		{Age(7200), "2h"}, {Age(72*3600 - 1), "71h"}, {Age(72 * 3600), "3d"}, {Age(30 * 86400), "30d"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
