package plugin_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
)

// TestCatalogIsUpToDate keeps src/catalog.json, which the query editor
// reads, equal to what the backend answers.
func TestCatalogIsUpToDate(t *testing.T) {
	got, err := json.MarshalIndent(plugin.GetCatalog(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("..", "..", "src", "catalog.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("src/catalog.json is not what the backend answers: go test ./pkg/plugin -run Catalog -update regenerates it")
	}
}
