package toolchange

import (
	"encoding/json"
	"testing"
)

// TestCompatible answers question 1 on pairs of schemas of the subset tools
// use: yes only with a proof, no only with a witness both validators agree
// on, cannot_decide otherwise.
func TestCompatible(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     Answer
		witness  string
	}{
		{"same", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`, AnswerYes, ""},
		{"optional added", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, AnswerYes, ""},
		{"required added", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`, AnswerNo, `{"a":"a"}`},
		{"field removed, closed", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, AnswerNo, `{"b":true}`},
		{"field removed, open", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`, AnswerYes, ""},
		{"enum narrowed", `{"type":"string","enum":["x","y"]}`, `{"type":"string","enum":["x"]}`, AnswerNo, `"y"`},
		{"enum widened", `{"enum":["x"]}`, `{"type":"string","enum":["x","y"]}`, AnswerYes, ""},
		{"integer to number", `{"type":"integer","minimum":1}`, `{"type":"number","minimum":0}`, AnswerYes, ""},
		{"number to integer", `{"type":"number"}`, `{"type":"integer"}`, AnswerNo, `0.5`},
		{"maxLength fell", `{"type":"string","maxLength":100}`, `{"type":"string","maxLength":10}`, AnswerNo, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`},
		{"range widened", `{"type":"integer","minimum":1,"maximum":5}`, `{"type":"integer","minimum":0,"exclusiveMaximum":10}`, AnswerYes, ""},
		{"exclusive bound", `{"type":"integer","minimum":0}`, `{"type":"integer","exclusiveMinimum":0}`, AnswerNo, `0`},
		{"nullable", `{"type":"string"}`, `{"type":["string","null"]}`, AnswerYes, ""},
		{"format added", `{"type":"string"}`, `{"type":"string","format":"uuid"}`, AnswerNo, `"a"`},
		{"additionalProperties closed", `{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, AnswerNo, `{"x_unnamed":null}`},
		{"nested required", `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
			`{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}`, AnswerNo, `{"o":{}}`},
		{"items widened", `{"type":"array","items":{"type":"string"},"maxItems":3}`, `{"type":"array","items":{"type":["string","integer"]}}`, AnswerYes, ""},
		{"anyOf in new", `{"type":"string"}`, `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, AnswerYes, ""},
		{"anyOf in old", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"type":["string","integer","null"]}`, AnswerYes, ""},
		{"local ref", `{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/s"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`, AnswerYes, ""},
		// A pattern the old schema did not have: a string the prover's samples
		// all match cannot be found, and no proof exists either.
		{"pattern added, all samples match", `{"type":"string","minLength":1}`, `{"type":"string","pattern":"^a"}`, AnswerCannotDecide, ""},
		{"pattern added, a sample fails", `{"type":"string"}`, `{"type":"string","pattern":"^[0-9]+$"}`, AnswerNo, `"a"`},
		{"unknown keyword", `{"type":"object"}`, `{"type":"object","dependentSchemas":{"a":{"required":["b"]}}}`, AnswerCannotDecide, ""},
		{"oneOf in new", `{"type":"string"}`, `{"oneOf":[{"type":"string"},{"maxLength":3}]}`, AnswerNo, `"a"`},
		{"false old", `false`, `{"type":"string"}`, AnswerYes, ""},
		// Found by TestProverProperty: an enum or const in the new schema
		// was not checked against an old schema with infinitely many
		// instances, and the prover said yes.
		{"const replaces a range", `{"type":"integer","exclusiveMaximum":2}`, `{"const":2.5}`, AnswerNo, `0`},
		{"enum added", `{"type":"string"}`, `{"type":"string","enum":["x"]}`, AnswerNo, `"a"`},
		{"const and enum both hold", `{"const":"x"}`, `{"const":"x","enum":["y"]}`, AnswerNo, `"x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o, n any
			if err := json.Unmarshal([]byte(c.old), &o); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.new), &n); err != nil {
				t.Fatal(err)
			}
			got := compatible(o, n, "the instance", "the old schema", "the new one")
			if got.Answer != c.want {
				t.Fatalf("answer %q (%s), want %q", got.Answer, got.Reason, c.want)
			}
			if string(got.Witness) != c.witness {
				t.Errorf("witness %s, want %s", got.Witness, c.witness)
			}
			if got.Answer != AnswerYes && got.Reason == "" {
				t.Error("no reason given")
			}
			if got.Answer == AnswerNo {
				// The witness must really split the schemas.
				vo, err := compile(o)
				if err != nil {
					t.Fatal(err)
				}
				vn, err := compile(n)
				if err != nil {
					t.Fatal(err)
				}
				var w any
				if err := json.Unmarshal(got.Witness, &w); err != nil {
					t.Fatal(err)
				}
				if vo.ValidateValue(w) != nil || vn.ValidateValue(w) == nil {
					t.Errorf("witness %s does not pass the old schema and fail the new one", got.Witness)
				}
			}
		})
	}
}
