package drifttest

import (
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// DeployedList returns the old list of a drift test whose old list is
// what a service advertises now (d, from the registry): the CLI's
// -deployed and the API's deployed source both read it here. A tool
// advertised under several revisions at once is an error: agents may have
// planned with any of them, and a test of the newest alone would pass a
// build that breaks the others' calls.
func DeployedList(d registry.Deployed) (toolchange.List, error) {
	if len(d.MidDeploy) > 0 {
		tools := make([]string, len(d.MidDeploy))
		for i, m := range d.MidDeploy {
			tools[i] = fmt.Sprintf("%s under %s", m.Tool, strings.Join(m.Revisions, " and "))
		}
		return toolchange.List{}, fmt.Errorf("service %q is mid-deploy in environment %q: its instances advertise %s at once, and agents may have planned with any of them; "+
			"test once the deploy is over (a revision no instance advertises any more drops out %s after its last advertisement), or give the old list itself",
			d.Service, d.Environment, strings.Join(tools, ", "), registry.DefaultFreshness)
	}
	old, err := toolchange.Decode(d.List)
	if err != nil {
		return toolchange.List{}, fmt.Errorf("the list %q advertises in environment %q: %w", d.Service, d.Environment, err)
	}
	return old, nil
}
