package argschema_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
)

// deployV2 is the seed's deploy_preview at revision 2: region required.
const deployV2 = `{"type":"object","properties":{"branch":{"type":"string","minLength":1},` +
	`"region":{"type":"string","enum":["us-east-preview","eu-preview"]},` +
	`"target":{"type":"object","properties":{"host":{"type":"string","format":"hostname"}}}},` +
	`"required":["branch","region"],"additionalProperties":false}`

func TestValidate(t *testing.T) {
	s, err := argschema.Compile(json.RawMessage(deployV2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, args string
		want       []argschema.Violation // nil: valid
	}{
		{"valid", `{"branch":"fix-login","region":"eu-preview"}`, nil},
		{"old shape", `{"branch":"fix-login"}`, []argschema.Violation{{Field: "/region", Kind: "required"}}},
		{"no arguments", ``, []argschema.Violation{{Field: "/branch", Kind: "required"}, {Field: "/region", Kind: "required"}}},
		{"null arguments", `null`, []argschema.Violation{{Field: "/branch", Kind: "required"}, {Field: "/region", Kind: "required"}}},
		{"unknown field", `{"branch":"b","region":"eu-preview","team":"x"}`, []argschema.Violation{{Field: "/team", Kind: "additionalProperties"}}},
		{"bad enum", `{"branch":"b","region":"prod"}`, []argschema.Violation{{Field: "/region", Kind: "enum"}}},
		{"wrong type", `{"branch":7,"region":"eu-preview"}`, []argschema.Violation{{Field: "/branch", Kind: "type"}}},
		{"format asserted", `{"branch":"b","region":"eu-preview","target":{"host":"not a host"}}`,
			[]argschema.Violation{{Field: "/target/host", Kind: "format"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate(json.RawMessage(tc.args))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v, want valid", err)
				}
				return
			}
			var ve *argschema.Error
			if !errors.As(err, &ve) {
				t.Fatalf("Validate: %v, want an *Error", err)
			}
			var got []argschema.Violation
			for _, v := range ve.Violations {
				if v.Message == "" {
					t.Errorf("violation %+v has no message", v)
				}
				got = append(got, argschema.Violation{Field: v.Field, Kind: v.Kind})
			}
			slices.SortFunc(got, func(a, b argschema.Violation) int {
				if a.Field < b.Field {
					return -1
				}
				if a.Field > b.Field {
					return 1
				}
				return 0
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations %+v, want %+v (%v)", got, tc.want, err)
			}
		})
	}
}

func TestFields(t *testing.T) {
	s, err := argschema.Compile(map[string]any{"type": "object", "required": []string{"branch", "region"},
		"properties": map[string]any{"branch": map[string]any{"type": "string"}}, "additionalProperties": false})
	if err != nil {
		t.Fatal(err)
	}
	var ve *argschema.Error
	if err := s.Validate(json.RawMessage(`{"team":"x"}`)); !errors.As(err, &ve) {
		t.Fatalf("Validate: %v", err)
	}
	missing := ve.Fields("required")
	slices.Sort(missing)
	if !slices.Equal(missing, []string{"branch", "region"}) {
		t.Errorf("missing %v", missing)
	}
	if got := ve.Fields("additionalProperties"); !slices.Equal(got, []string{"team"}) {
		t.Errorf("additional %v", got)
	}
	if got := ve.Fields(""); len(got) != 3 {
		t.Errorf("all fields %v, want 3", got)
	}
}

func TestNotJSON(t *testing.T) {
	s, err := argschema.Compile(json.RawMessage(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`{"branch":`)); !errors.Is(err, argschema.ErrNotJSON) {
		t.Errorf("Validate of truncated JSON: %v, want ErrNotJSON", err)
	}
}

func TestCompileRefusesRemoteReferences(t *testing.T) {
	_, err := argschema.Compile(json.RawMessage(`{"$ref":"https://example.com/schema.json"}`))
	if err == nil {
		t.Fatal("a schema with a remote reference compiled: the validator must load nothing")
	}
	if _, err := argschema.Compile(json.RawMessage(`{"type":`)); err == nil {
		t.Fatal("a truncated schema compiled")
	}
}

func FuzzValidate(f *testing.F) {
	s, err := argschema.Compile(json.RawMessage(deployV2))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`{"branch":"fix-login"}`)
	f.Add(`{"branch":"b","region":"eu-preview","target":{"host":"a.b"}}`)
	f.Add(`[1,2`)
	f.Fuzz(func(t *testing.T, args string) {
		err := s.Validate(json.RawMessage(args))
		var ve *argschema.Error
		if errors.As(err, &ve) && len(ve.Violations) == 0 {
			t.Fatalf("an *Error without violations for %q", args)
		}
	})
}
