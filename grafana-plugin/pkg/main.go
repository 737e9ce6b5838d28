// Command gpx_mcpdrift is the backend of the mcpdrift Grafana data source.
// Grafana starts it; it only hands control to the plugin SDK.
package main

import (
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
)

func main() {
	if err := datasource.Manage(plugin.ID, plugin.NewDatasource, datasource.ManageOpts{}); err != nil {
		log.DefaultLogger.Error(err.Error())
		os.Exit(1)
	}
}
