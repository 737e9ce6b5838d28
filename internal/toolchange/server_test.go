package toolchange

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeList serves the tools of a tools/list document from an MCP server
// built with the official Go SDK, over streamable HTTP on loopback, one
// tool per page so that listing must follow the cursor.
func serveList(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tools  []*mcp.Tool `json:"tools"`
		Result struct {
			Tools []*mcp.Tool `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	tools := append(doc.Tools, doc.Result.Tools...)
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	for _, tl := range tools {
		srv.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestListServer lists a live SDK server and finds the definitions, and so
// the revisions, of the document it serves.
func TestListServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join("testdata", "seed", "removal", "old.json")
	want := readList(t, path)
	doc, err := ListServer(ctx, serveList(t, path), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != len(want.Tools) || len(want.Tools) < 2 {
		t.Fatalf("listed %d tools, want %d", len(got.Tools), len(want.Tools))
	}
	for _, w := range want.Tools {
		g, ok := got.Tool(w.Name)
		if !ok {
			t.Fatalf("%s not listed", w.Name)
		}
		if g.Revision != w.Revision {
			t.Errorf("%s: revision %s listed, %s from the document", w.Name, g.Revision, w.Revision)
		}
	}
	r := Compare(want, got, Options{})
	if !r.Pass() {
		t.Errorf("the served list differs from its document: %+v", r.Tools)
	}

	if _, err := ListServer(ctx, "http://127.0.0.1:1/mcp", "test", nil); err == nil {
		t.Error("listing a port nothing listens on succeeded")
	}
}
