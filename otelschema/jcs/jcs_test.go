package jcs

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestNumbers checks the IEEE 754 → text samples of RFC 8785, Appendix B.
func TestNumbers(t *testing.T) {
	f := func(bits, want string) {
		t.Helper()
		b, err := hex.DecodeString(bits)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendNumber(nil, math.Float64frombits(binary.BigEndian.Uint64(b)))
		if err != nil {
			t.Fatalf("%s: %v", bits, err)
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", bits, got, want)
		}
	}
	f("0000000000000000", "0")
	f("8000000000000000", "0")
	f("0000000000000001", "5e-324")
	f("8000000000000001", "-5e-324")
	f("7fefffffffffffff", "1.7976931348623157e+308")
	f("ffefffffffffffff", "-1.7976931348623157e+308")
	f("4340000000000000", "9007199254740992")
	f("c340000000000000", "-9007199254740992")
	f("4430000000000000", "295147905179352830000")
	f("44b52d02c7e14af5", "9.999999999999997e+22")
	f("44b52d02c7e14af6", "1e+23")
	f("44b52d02c7e14af7", "1.0000000000000001e+23")
	f("444b1ae4d6e2ef4e", "999999999999999700000")
	f("444b1ae4d6e2ef4f", "999999999999999900000")
	f("444b1ae4d6e2ef50", "1e+21")
	f("3eb0c6f7a0b5ed8c", "9.999999999999997e-7")
	f("3eb0c6f7a0b5ed8d", "0.000001")
	f("41b3de4355555553", "333333333.3333332")
	f("41b3de4355555554", "333333333.33333325")
	f("41b3de4355555555", "333333333.3333333")
	f("41b3de4355555556", "333333333.3333334")
	f("41b3de4355555557", "333333333.33333343")
	f("becbf647612f3696", "-0.0000033333333333333333")
	f("43143ff3c1cb0959", "1424953923781206.2")

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendNumber(nil, bad); !errors.Is(err, ErrNumber) {
			t.Errorf("AppendNumber(%v) error %v, want ErrNumber", bad, err)
		}
	}
}

// TestTransform checks the examples of RFC 8785 (sections 3.2.2 and 3.2.3)
// and the I-JSON rejections.
func TestTransform(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := Transform([]byte(in))
		if err != nil {
			t.Fatalf("Transform(%s): %v", in, err)
		}
		if string(got) != want {
			t.Errorf("Transform(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	// Section 3.2.2: primitives.
	f(`{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`)
	// Section 3.2.3: sorting by UTF-16 code units.
	f(`{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001f600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}")
	// Nesting, empty containers, no HTML escaping, -0.
	f(` { "b" : [ {}, [], -0, 1.0, "<&>" ], "a" : { "z": 1, "y": null } } `, `{"a":{"y":null,"z":1},"b":[{},[],0,1,"<&>"]}`)

	bad := func(in string, want error) {
		t.Helper()
		_, err := Transform([]byte(in))
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Errorf("Transform(%q) error %v, want %v", in, err, want)
		}
	}
	bad(`{"a":1,"a":2}`, ErrDuplicateName)
	bad(`[1e400]`, ErrNumber)
	bad(`["\ud800"]`, ErrLoneSurrogate)
	bad(`["\udc00\ud800x"]`, ErrLoneSurrogate)
	bad("[\"\xff\"]", ErrInvalidUTF8)
	bad(`{"a":1} {}`, nil)
	bad(`{"a":}`, nil)
	if _, err := Transform([]byte(`["\\ud800"]`)); err != nil {
		t.Errorf("an escaped backslash before u is not a surrogate: %v", err)
	}
}

func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"name": "deploy_preview", "inputSchema": map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"inputSchema":{"type":"object"},"name":"deploy_preview"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := Marshal(func() {}); err == nil || !strings.Contains(err.Error(), "cannot marshal") {
		t.Errorf("Marshal(func) error %v", err)
	}
}

// FuzzTransform checks that canonical output is a fixed point.
func FuzzTransform(f *testing.F) {
	f.Add([]byte(`{"b":[1.5,"x"],"a":{"\u00e9":null}}`))
	f.Add([]byte(`[1e21,1e-7,123456789012345678901234]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Transform(data)
		if err != nil {
			return
		}
		again, err := Transform(out)
		if err != nil {
			t.Fatalf("canonical output %q rejected: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not a fixed point: %q → %q", out, again)
		}
	})
}
