package toolchange

import (
	"encoding/json"
	"testing"
)

// TestInstances: the fullest instance first, every one valid under the
// schema, no duplicates, at most n; a schema nothing satisfies yields none.
func TestInstances(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		n            int
		first        string
		count        int
	}{
		{"object", `{"type":"object","properties":{"title":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}}},"required":["title"],"additionalProperties":false}`,
			16, `{"labels":["a"],"title":"a"}`, 11},
		{"bounded", `{"type":"object","properties":{"region":{"enum":["eu","us"]}},"required":["region"]}`, 2, `{"region":"eu"}`, 2},
		{"unsatisfiable", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"not":{}}`, 8, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
				t.Fatal(err)
			}
			got, err := Instances(schema, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := compile(schema)
			seen := map[string]bool{}
			for _, g := range got {
				if err := v.Validate(g); err != nil || seen[string(g)] {
					t.Errorf("instance %s: invalid (%v) or repeated", g, err)
				}
				seen[string(g)] = true
			}
			if len(got) != tc.count || (tc.count > 0 && string(got[0]) != tc.first) {
				t.Fatalf("instances %s: want %d, the first %s", got, tc.count, tc.first)
			}
		})
	}
}
