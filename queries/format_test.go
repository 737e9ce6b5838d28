package queries_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/queries"
)

func TestAgeAndPercent(t *testing.T) {
	for s, want := range map[int64]string{59: "59s", 119: "119s", 120: "2m", 7199: "119m", 7200: "2h", 259199: "71h", 259200: "3d"} {
		if got := queries.Age(s); got != want {
			t.Errorf("Age(%d) = %q, want %q", s, got, want)
		}
	}
	if got := queries.Percent(0.28187919463087246); got != "28.19%" {
		t.Errorf("Percent = %q", got)
	}
}
