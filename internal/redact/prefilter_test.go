package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

var prefilterKey = []byte("0123456789abcdef0123456789abcdef")

// TestPatternFactors pins the literals derived from each default pattern:
// every default pattern has some, so that most strings skip every scan.
func TestPatternFactors(t *testing.T) {
	want := map[int]string{
		0: "fold [basic bearer]", 1: "[ABIA ACCA AKIA ASIA]", 3: "[PRIVATE KEY-----]", 5: "[xoxa- xoxb- xoxo- xoxp- xoxr- xoxs-]",
		7: "[sk-]", 8: "[mcpdrift_]", 9: "[.eyJ]", 11: "fold [://]",
	}
	for i, p := range DefaultRules().Patterns {
		f := patternFactors(p)
		if !f.known || f.shortest() < 1 {
			t.Errorf("pattern %d %q: no literal found", i, p)
			continue
		}
		got := fmt.Sprint(f.lits)
		if f.fold {
			got = "fold " + got
		}
		if w, ok := want[i]; ok && got != w {
			t.Errorf("pattern %d %q: literals %s, want %s", i, p, got, w)
		}
	}
	for _, p := range []string{`.*`, `[a-z]+`, `a|.`, `(?:x)?y*`} {
		if f := patternFactors(p); f.known {
			t.Errorf("%q: literals %v, want none known", p, f.lits)
		}
	}
}

// unfiltered returns r with every pattern run on every whole string: the
// reference the pre-filter and the regions must agree with.
func unfiltered(r *Redactor) *Redactor {
	return &Redactor{key: r.key, keys: r.keys, paths: r.paths, patterns: r.patterns, secretIx: r.secretIx,
		filters: make([]factors, len(r.filters)), locators: make([]*locator, len(r.locators)), regionMin: -1,
		patScan: newScanner(make([][]string, len(r.filters))), keyMatch: r.keyMatch}
}

// TestScanner checks the one-pass scanner against strings.Contains over
// every literal.
func TestScanner(t *testing.T) {
	groups := [][]string{{"abc", "bcd"}, {"cd"}, {"x"}, {"BEARER"}, {}}
	sc := newScanner(groups)
	for _, s := range []string{"", "ab", "abc", "xbcd", "zzcd", "Bearer", "ABCD", "abxcd"} {
		found := make([]uint64, sc.words)
		sc.scan(s, found)
		for gi, g := range groups {
			want := false
			for _, l := range g {
				want = want || strings.Contains(strings.ToLower(s), strings.ToLower(l))
			}
			if got := found[0]&(1<<gi) != 0; got != want {
				t.Errorf("scan(%q): group %v found %v, want %v", s, g, got, want)
			}
		}
	}
}

// checkSame asserts that the pre-filter changes nothing for s.
func checkSame(t *testing.T, r *Redactor, s string) {
	t.Helper()
	u := unfiltered(r)
	if got, want := r.Text(s), u.Text(s); got != want {
		t.Fatalf("Text(%q) = %q with the pre-filter, %q without", s, got, want)
	}
	if got, want := r.Args(s), u.Args(s); got != want {
		t.Fatalf("Args(%q) = %q with the pre-filter, %q without", s, got, want)
	}
	// Events: s in every field redaction reads, the normalised arguments
	// equal to the raw ones.
	checkEventsSame(t, r, []otelschema.Event{{ArgsRaw: s, ArgsNormalized: s, ExternalTarget: s, RequestID: s,
		SessionID: s, RunID: s, ServiceInstance: s, IdempotencyKey: s, RetryOf: s, ErrorCode: s,
		Attributes: map[string]string{"note": s, "x-api-key": s}}})
}

// checkEventsSame asserts that the pre-filter changes nothing for events:
// the same values replaced, and as many.
func checkEventsSame(t *testing.T, r *Redactor, events []otelschema.Event) {
	t.Helper()
	u := unfiltered(r)
	got, want := make([]otelschema.Event, len(events)), make([]otelschema.Event, len(events))
	for i, e := range events {
		got[i], want[i] = e, e
		got[i].Attributes, want[i].Attributes = clonedMap(e.Attributes), clonedMap(e.Attributes)
	}
	n0 := r.Redacted()
	r.Events(got)
	u.Events(want)
	for i := range got {
		if g, w := fmt.Sprint(got[i]), fmt.Sprint(want[i]); g != w {
			t.Fatalf("Events: %s with the pre-filter, %s without", g, w)
		}
	}
	if n, m := r.Redacted()-n0, u.Redacted(); n != m {
		t.Fatalf("Events redacted %d values with the pre-filter, %d without", n, m)
	}
}

func newTestRedactor(t testing.TB, rules Rules) *Redactor {
	t.Helper()
	r, err := New(Config{Rules: rules, Key: prefilterKey})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPrefilterChangesNothing: on secrets of every default kind, spelled
// in every case, inside JSON (escaped too) and text, and on the
// simulator's arguments, redaction with the pre-filter equals redaction
// with every pattern run.
func TestPrefilterChangesNothing(t *testing.T) {
	r := newTestRedactor(t, Rules{})
	cases := []string{
		`{"q":"x"}`, `plain text`, `{"header":"Bearer abcdefgh12345678"}`, `BEARER abcdefgh12345678`, `bAsIc Ym9iOnBhc3N3b3Jk`,
		`use AKIAIOSFODNN7EXAMPLE now`, `AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY0"`,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
		`ghp_abcdefghijklmnopqrstuvwxyz0123456789`, `xoxb-1234567890-abc`, `sk_live_abcdefghijklmnop1234`,
		`sk-proj-abcdefghijklmnopqrstuvwx`, `mcpdrift_` + strings.Repeat("a", 40),
		`eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop`, `PassWord = hunter22`, `api-key: zzz1`,
		`https://u:pw@x.example/`, `HTTPS://U:PW@X.EXAMPLE/`,
		// JSON escapes that spell what the raw text does not.
		`{"u":"https:\/\/u:pw@x.example\/"}`, `{"h":"Bearer\u0020abcdefgh12345678"}`, `{"p\u0061ssword":"x"}`,
		// Non-ASCII text around secrets, and case folds beyond ASCII.
		`ſecret=abc123`, `Token=ÄÖÜ12345`, `🙂 bearer abcdefgh12345678 🙂`, `KEY=ab\u212acd`,
		`{"apiKey":"k"}`, `{"a":[{"password":"x"}]}`,
	}
	for _, s := range cases {
		checkSame(t, r, s)
	}
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	seen := map[string]bool{}
	for n := 0; n < 20000 && g.Next(&rec); n++ {
		events = append(events, rec.Event)
		for _, s := range []string{rec.Event.ArgsRaw, rec.Event.ArgsNormalized, rec.Event.ExternalTarget} {
			if s != "" && !seen[s] {
				seen[s] = true
				checkSame(t, r, s)
			}
		}
	}
	checkEventsSame(t, r, events)
}

// TestManyPatterns: past 256 patterns the found set is allocated, and
// the pre-filter still agrees with every pattern run.
func TestManyPatterns(t *testing.T) {
	var pats []string
	for i := range 300 {
		pats = append(pats, fmt.Sprintf(`tok%03d-[a-z]{4}`, i))
	}
	r := newTestRedactor(t, Rules{Patterns: pats})
	for _, s := range []string{"tok299-abcd", "x tok000-wxyz y", "tok300-abcd", "nothing here", "ſ tok150-abcd"} {
		checkSame(t, r, s)
	}
	if got := r.Text("a tok299-abcd b"); !strings.Contains(got, MarkerPrefix) {
		t.Errorf("pattern 299 not applied: %q", got)
	}
}

// FuzzPrefilter compares redaction with and without the pre-filter.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{`{"password":"x"}`, `Bearer abcdefgh12345678`, `https:\/\/u:p@h`, `ſecret=x1y`, "AKIAIOSFODNN7EXAMPLE"} {
		f.Add(s)
	}
	r := newTestRedactor(f, Rules{})
	f.Fuzz(func(t *testing.T, s string) { checkSame(t, r, s) })
}

// simulatorEvents returns n events of the simulator's default fleet.
func simulatorEvents(b *testing.B, n int) []otelschema.Event {
	b.Helper()
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rec simulate.Record
	out := make([]otelschema.Event, 0, n)
	for len(out) < n && g.Next(&rec) {
		out = append(out, rec.Event)
	}
	return out
}

// BenchmarkEvents redacts the simulator's events (their argument mix has
// secrets in some calls) with the default rules, with and without the
// pre-filter; ns/op is per event.
func BenchmarkEvents(b *testing.B) {
	events := simulatorEvents(b, 20000)
	r := newTestRedactor(b, Rules{})
	for _, c := range []struct {
		name string
		r    *Redactor
	}{{"prefilter", r}, {"every-pattern", unfiltered(r)}} {
		b.Run(c.name, func(b *testing.B) {
			batch := make([]otelschema.Event, len(events))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % len(events)
				if j == 0 {
					b.StopTimer()
					copy(batch, events)
					for k := range batch {
						batch[k].Attributes = clonedMap(events[k].Attributes)
					}
					b.StartTimer()
				}
				c.r.Events(batch[j : j+1])
			}
		})
	}
}

func clonedMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
