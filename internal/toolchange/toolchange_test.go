package toolchange

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/seed")

func readList(t *testing.T, path string) List {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return l
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the check gives; got:\n%s", path, got)
	}
}

// TestSeedExamples classifies the seed's own examples as the seed does.
// Each case is testdata/seed/<case>/{old,new}.json; want.json and want.md
// are the golden report in JSON and Markdown.
func TestSeedExamples(t *testing.T) {
	type want struct {
		class   string
		verdict Verdict
		args    Answer // "" when the tool is in one list only
		readers Answer // "" when neither has an output schema
	}
	cases := map[string]map[string]want{
		// "Añadir un region obligatorio a deploy_preview es diferente. El
		// llamador antiguo ya no satisface el validador."
		"deploy_preview_region": {"deploy_preview": {classMigration, VerdictNeedsDecision, AnswerNo, ""}},
		// "Añadir region obligatoria con un valor histórico seguro:
		// normaliza al valor predeterminado estable".
		"deploy_preview_region_default": {"deploy_preview": {classMigration, VerdictNeedsDecision, AnswerNo, ""}},
		// "Añadir label opcional: aplica el valor predeterminado anterior".
		"deploy_preview_label": {"deploy_preview": {classAdditive, VerdictSafe, AnswerYes, ""}},
		// "Si una revisión añade environment ... un reintento automático
		// puede ampliar o redirigir la acción."
		"deploy_preview_environment": {"deploy_preview": {classAuthority, VerdictViolation, AnswerYes, ""}},
		// "La validación pasa, la solicitud funciona y la acción es
		// incorrecta. Es una ruptura semántica."
		"project_meaning": {"archive_project": {classSemantic, VerdictViolation, AnswerYes, ""}},
		// "Rechaza el caso y publica una herramienta distinta o una ruta de
		// migración explícita."
		"run_report_target": {"run_report": {classSemantic, VerdictViolation, AnswerNo, ""}},
		// "Si un servidor revisado cambia id por issueId ... la siguiente
		// acción del agente puede fallar lejos de la llamada original."
		"create_issue_issueId": {"create_issue": {classSemantic, VerdictViolation, AnswerYes, AnswerNo}},
		"create_issue_wrapped": {"create_issue": {classSemantic, VerdictViolation, AnswerYes, AnswerNo}},
		// "Una eliminación debe fallar claramente."
		"removal": {
			"delete_branch": {classRemoval, VerdictNeedsDecision, "", ""},
			"get_status":    {"", VerdictSafe, "", ""},
		},
		"removal_renamed": {
			"deploy_preview":     {classRemoval, VerdictNeedsDecision, "", ""},
			"deploy_environment": {classAdditive, VerdictSafe, "", ""},
		},
		"annotation_widened": {"list_previews": {classAuthority, VerdictViolation, AnswerYes, ""}},
	}
	for name, tools := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "seed", name)
			r := Compare(readList(t, filepath.Join(dir, "old.json")), readList(t, filepath.Join(dir, "new.json")), Options{})
			if len(r.Tools) != len(tools) {
				t.Fatalf("%d tools checked, want %d: %+v", len(r.Tools), len(tools), r.Tools)
			}
			for _, c := range r.Tools {
				w, ok := tools[c.Tool]
				if !ok {
					t.Fatalf("unexpected tool %q", c.Tool)
				}
				if c.Class != w.class || c.Verdict != w.verdict {
					t.Errorf("%s: class %q verdict %q, want %q %q (%s)", c.Tool, c.Class, c.Verdict, w.class, w.verdict, c.Reason)
				}
				if got := answer(c.OldArguments); got != w.args {
					t.Errorf("%s: old arguments %q, want %q (%+v)", c.Tool, got, w.args, c.OldArguments)
				}
				if got := answer(c.OldReaders); got != w.readers {
					t.Errorf("%s: old readers %q, want %q (%+v)", c.Tool, got, w.readers, c.OldReaders)
				}
				if c.Verdict != VerdictSafe && (c.Reason == "" || c.Path == "") {
					t.Errorf("%s: a %s verdict without its reason or path: %+v", c.Tool, c.Verdict, c)
				}
			}
			wantPass := true
			for _, w := range tools {
				wantPass = wantPass && w.verdict == VerdictSafe
			}
			if want := wantPass; r.Pass() != want {
				t.Errorf("Pass() = %v, want %v", r.Pass(), want)
			}
			js, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(dir, "want.json"), append(js, '\n'))
			var md bytes.Buffer
			if err := r.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(dir, "want.md"), md.Bytes())
		})
	}
}

func answer(c *Compatibility) Answer {
	if c == nil {
		return ""
	}
	return c.Answer
}
