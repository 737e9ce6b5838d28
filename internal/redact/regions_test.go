package redact

import (
	"fmt"
	"strings"
	"testing"
)

// TestLocators pins what each default pattern's locator knows: every
// default pattern has one, and most begin with their literals.
func TestLocators(t *testing.T) {
	want := []string{
		"prefix [basic bearer] max -1", "prefix [ABIA ACCA AKIA ASIA] max 20", "prefix [aws] max 78",
		"prefix [-----BEGIN] max -1", "prefix [gho_ ghp_ ghr_ ghs_ ghu_ github_pat_] max -1",
		"prefix [xoxa- xoxb- xoxo- xoxp- xoxr- xoxs-] max -1", "prefix [rk_live_ rk_test_ sk_live_ sk_test_] max -1",
		"prefix [sk- sk-ant- sk-proj-] max -1", "prefix [mcpdrift_] max -1", "prefix [eyJ] max -1",
		"prefix [access-key access_key accesskey api-key api_key apikey passwd password pwd secret token] max -1",
		"within [://] max -1",
	}
	r := newTestRedactor(t, Rules{})
	if len(r.locators) != len(want) {
		t.Fatalf("%d locators, want %d", len(r.locators), len(want))
	}
	for i, l := range r.locators {
		if l == nil {
			t.Errorf("pattern %d: no locator", i)
			continue
		}
		kind := "within"
		if l.prefix {
			kind = "prefix"
		}
		if got := fmt.Sprintf("%s %v max %d", kind, l.lits, l.maxLen); got != want[i] {
			t.Errorf("pattern %d %q: %s, want %s", i, r.patterns[i], got, want[i])
		}
	}
	for _, c := range []struct{ pattern, in, out string }{
		{`(?i)key=[0-9]+`, "kKeEyY=09", "ab \n:"},
		{`a.b`, "ab \t!Z", "\n"},
		{`x[^\s]y`, "xy!#Z", " \t\n"},
		{`\bfoo\b`, "fo", " ._"},
	} {
		l := newLocator(c.pattern, patternFactors(c.pattern))
		if l == nil {
			t.Fatalf("%q: no locator", c.pattern)
		}
		for _, set := range []struct {
			bytes string
			want  bool
		}{{c.in, true}, {c.out, false}} {
			for i := 0; i < len(set.bytes); i++ {
				if got := l.in(set.bytes[i]); got != set.want {
					t.Errorf("%q: byte %q in the alphabet: %v, want %v", c.pattern, set.bytes[i], got, set.want)
				}
			}
		}
	}
}

// regionRules are patterns whose matches the regions must find exactly as
// a whole scan does: anchors, word boundaries, multi-line mode, lazy and
// bounded repetitions, literals inside matches, case folds.
var regionRules = Rules{Defaults: new(bool), Patterns: []string{
	`(?m)^key=(?P<secret>\w+)$`,
	`\bfoo\b`,
	`a.{0,3}b`,
	`(?i)x(?:yz|w)+`,
	`[0-9]{4}-secret`,
	`tok(?:en)?s?=\S+`,
	`(?s)BEGIN.*?END`,
	`\Bing\b`,
	`q\d{2,}z$`,
	`(?i)\bid:\s*(?P<secret>[a-f0-9]{6,})`,
}}

// regionTexts are long strings to cut into regions: each repeats a piece
// that holds literals, matches and near misses.
var regionTexts = []string{
	"key=abc\nkey=def ghi\n xkey=1\nkey=zz",
	"foo food afoo foo_ foo. foo",
	"ab a12b a1234b aXb\nb aab",
	"xyz XW xyzw xw xYzWw x",
	"1234-secret 123-secret 12345-secret",
	"token=abc toks=1 tok= tokens=x\tz",
	"BEGIN one END BEGIN two BEGIN three END END",
	"singing ring ing king_ bring.",
	"q12z q1z q123 q99z",
	"id: abcdef ID:0123456 id:12 Id:  fedcba98 xid: abcdef",
	"Bearer abcdefgh12345678 password=hunter2 https://u:pw@host/ AKIAIOSFODNN7EXAMPLE aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop -eyJaaaa -eyJ ghp_abcdefghijklmnopqrstuvwxyz0123 ",
}

// TestRegionsChangeNothing: on long strings, the regions find exactly the
// matches a whole scan finds, for the default rules and for regionRules.
func TestRegionsChangeNothing(t *testing.T) {
	for _, rules := range []Rules{{}, regionRules} {
		r := newTestRedactor(t, rules)
		located := 0
		for _, piece := range regionTexts {
			for _, n := range []int{1, 3, 200} {
				s := strings.Repeat(piece, n)
				located += checkRegions(t, r, s)
				located += checkRegions(t, r, " "+s+"!")
				checkSame(t, r, s)
			}
		}
		// Most tries must use the regions, or this test checks little.
		if tries := 2 * 3 * len(regionTexts) * len(r.patterns); located < tries/2 {
			t.Errorf("regions used in %d of %d tries", located, tries)
		}
	}
}

// checkRegions asserts that every pattern's matches in s are the same with
// the regions and with a whole scan, and returns for how many patterns the
// regions were used.
func checkRegions(t *testing.T, r *Redactor, s string) (located int) {
	t.Helper()
	if !isASCII(s) {
		return 0
	}
	for i, re := range r.patterns {
		l := r.locators[i]
		if l == nil {
			continue
		}
		want := fmt.Sprint(re.FindAllStringSubmatchIndex(s, -1))
		got, ok := l.matches(re, s)
		if ok && fmt.Sprint(got) != want {
			t.Fatalf("pattern %q on %q: regions find %v, a whole scan %s", re, s, got, want)
		}
		if ok {
			located++
		}
	}
	return located
}

// FuzzRegions compares the regions with a whole scan.
func FuzzRegions(f *testing.F) {
	for _, s := range regionTexts {
		f.Add(s)
	}
	rs := []*Redactor{newTestRedactor(f, Rules{}), newTestRedactor(f, regionRules)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range rs {
			checkRegions(t, r, s)
		}
	})
}

// BenchmarkLongArgs redacts 256 KiB argument documents (prose; prose that
// holds literals the default patterns begin with but no secret; text dense
// with secrets) as shipped and with each pattern its pre-filter lets run
// scanning the whole string; ns/op is per document.
func BenchmarkLongArgs(b *testing.B) {
	r := newTestRedactor(b, Rules{})
	for _, c := range []struct{ name, piece string }{
		{"prose", "plain prose about the quarterly report and its figures, nothing else. "},
		{"literals", "the api key rotation happened, see https://example.com/docs and the token doc. "},
		{"secrets", "password=hunter22 and Bearer abcdefghijklmnop, https://u:p@h/ "},
	} {
		text := strings.Repeat(c.piece, 256<<10/len(c.piece))
		doc := `{"content":"` + text + `"}`
		for _, v := range []struct {
			name string
			r    *Redactor
		}{{"regions", r}, {"whole-strings", withoutRegions(r)}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for i := 0; i < b.N; i++ {
					v.r.Args(doc)
				}
			})
		}
	}
}

// withoutRegions returns r with the pre-filter but without regions.
func withoutRegions(r *Redactor) *Redactor {
	return &Redactor{key: r.key, keys: r.keys, paths: r.paths, patterns: r.patterns, secretIx: r.secretIx,
		filters: r.filters, locators: r.locators, regionMin: -1, patScan: r.patScan, keyMatch: r.keyMatch}
}
