//go:build mage

// Magefile builds the plugin's backend the way @grafana/create-plugin
// projects do, with the plugin SDK's build package: the executables named
// after plugin.json's "executable" and dist/go_plugin_build_manifest, the
// sha256 of every Go source file, which the plugin validator checks.
//
// Run it with the mage pinned in go.mod's tool directive:
//
//	go tool mage -v          # Default
//	go tool mage -l          # every target, such as buildAll
package main

import (
	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

// Default builds the backend for every platform the SDK builds.
var Default = build.BuildAll
