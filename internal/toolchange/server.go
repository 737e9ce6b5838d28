package toolchange

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientName is the name ListServer gives its MCP client in initialize.
const ClientName = "mcpdrift-check"

// ListServer lists the tools a live MCP server advertises now, over
// streamable HTTP with the official Go SDK: it initialises a session at
// endpoint, follows every tools/list page and closes the session. It
// returns the whole list as one tools/list result document, which Decode
// reads as it reads a file, so that revisions are the ones a client of that
// server records. version is the client version sent in initialize; hc nil
// means http.DefaultClient.
func ListServer(ctx context.Context, endpoint, version string, hc *http.Client) ([]byte, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the MCP server at %s: %w", endpoint, err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("cannot list the tools of %s (after %d): %w", endpoint, len(tools), err)
		}
		tools = append(tools, t)
	}
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	doc, err := json.Marshal(mcp.ListToolsResult{Tools: tools})
	if err != nil {
		return nil, fmt.Errorf("cannot encode the %d tools of %s: %w", len(tools), endpoint, err)
	}
	return doc, nil
}
