package argschema_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
)

// validationVectors is otelschema/testdata/validation.json: schemas,
// arguments and the verdicts every instrumentation's validator must give,
// so that a TypeScript server (mcpts, which reads the same file) admits and
// rejects exactly the calls a Go server does, naming the same fields.
type validationVectors struct {
	Comment string `json:"comment"`
	Cases   []struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		// Args are the call's arguments; null stands for a call without
		// any.
		Args     json.RawMessage `json:"args"`
		Compiles *bool           `json:"compiles"`
		Valid    bool            `json:"valid"`
		// Violations are sorted by field, then kind.
		Violations []struct {
			Field string `json:"field"`
			Kind  string `json:"kind"`
		} `json:"violations"`
	} `json:"cases"`
}

func TestValidationVectors(t *testing.T) {
	raw, err := os.ReadFile("../../otelschema/testdata/validation.json")
	if err != nil {
		t.Fatal(err)
	}
	var vv validationVectors
	if err := json.Unmarshal(raw, &vv); err != nil {
		t.Fatal(err)
	}
	if len(vv.Cases) < 20 {
		t.Fatalf("%d cases: the file lost some", len(vv.Cases))
	}
	for _, c := range vv.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s, err := argschema.Compile(c.Schema)
			if c.Compiles != nil && !*c.Compiles {
				if err == nil {
					t.Fatalf("schema %s compiled, want it refused", c.Schema)
				}
				return
			}
			if err != nil {
				t.Fatalf("compile %s: %v", c.Schema, err)
			}
			verr := s.Validate(c.Args)
			if c.Valid {
				if verr != nil || len(c.Violations) != 0 {
					t.Fatalf("Validate(%s) = %v, want valid", c.Args, verr)
				}
				return
			}
			var ve *argschema.Error
			if !errors.As(verr, &ve) {
				t.Fatalf("Validate(%s) = %v, want violations", c.Args, verr)
			}
			var got, want []string
			for _, v := range ve.Violations {
				got = append(got, v.Field+" "+v.Kind)
			}
			for _, v := range c.Violations {
				want = append(want, v.Field+" "+v.Kind)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("Validate(%s): violations\n  %s\nwant\n  %s", c.Args, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}
