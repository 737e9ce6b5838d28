package render

import "testing"

// TestMachineNumbers: CSV cells hold plain decimals, exact, never an
// exponent.
func TestMachineNumbers(t *testing.T) {
	v := values{machine: true}
	big, small := 40052358.7, 0.000015
	for _, c := range []struct{ got, want string }{
		{v.float(big), "40052358.7"}, {v.float(1e21), "1000000000000000000000"},
		{v.ratio(small), "0.000015"}, {v.ratio(0.28187919463087246), "0.28187919463087246"},
		{v.ms(&big), "40052358.7"}, {v.ms(nil), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
