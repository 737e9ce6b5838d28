package receiver

import (
	"strings"
	"testing"
)

func TestJSONTooDeep(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want bool
	}{
		{`{"a":[1,{"b":2}]}`, 3, false},
		{`{"a":[1,{"b":2}]}`, 2, true},
		{`{"a":"[[[[[[[[[["}`, 1, false}, // brackets in strings do not count
		{`{"a":"\"[[[[["}`, 1, false},    // nor after an escaped quote
		{`[[[]]][[[]]]`, 3, false},       // depth, not count
		{strings.Repeat("[", 10000), 200, true},
	} {
		if got := jsonTooDeep([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("jsonTooDeep(%.30q, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
	}
}
