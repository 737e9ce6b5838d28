// Package apiv1 is the wire contract of mcpdrift's HTTP API, /api/v1: the
// rows of every report and series, their envelopes, the RFC 9457 problem
// of every error, and the request bodies and defaults that clients share.
//
// It is defined once, here: the queries package fills these rows, the
// server (internal/api) answers them and describes them in its OpenAPI
// document, and the CLI's client (internal/apiclient) and the Grafana
// plugin decode them. Their JSON field names are the API's; a change to
// one is a change to the API.
//
// The package imports nothing but the standard library, so that a reader
// of the API (the plugin, a third party) links none of the server.
package apiv1
