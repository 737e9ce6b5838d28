package apiv1_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// TestEventIDJSON checks that ids above 2^53 survive JSON: written as
// strings, read from strings or numbers.
func TestEventIDJSON(t *testing.T) {
	for _, tc := range []struct {
		id   apiv1.EventID
		json string
	}{
		{0, `"0"`},
		{1 << 53, `"9007199254740992"`},
		{1<<53 + 1, `"9007199254740993"`},
		{9969864168398893637, `"9969864168398893637"`},
		{1<<64 - 1, `"18446744073709551615"`},
	} {
		b, err := json.Marshal(tc.id)
		if err != nil || string(b) != tc.json {
			t.Errorf("marshal %d = %s, %v; want %s", uint64(tc.id), b, err, tc.json)
		}
		for _, in := range []string{tc.json, tc.json[1 : len(tc.json)-1]} {
			var got apiv1.EventID
			if err := json.Unmarshal([]byte(in), &got); err != nil || got != tc.id {
				t.Errorf("unmarshal %s = %d, %v; want %d", in, uint64(got), err, uint64(tc.id))
			}
		}
	}
	for _, bad := range []string{`"-1"`, `"18446744073709551616"`, `"1e3"`, `""`, `true`} {
		var got apiv1.EventID
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("unmarshal %s = %d, want an error", bad, uint64(got))
		}
	}
}
