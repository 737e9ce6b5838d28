package plugin

import "github.com/mcpdrift/mcpdrift/apiv1"

// The rows of the mcpdrift API's reports are apiv1's, the API's own types:
// the plugin decodes what the server encodes, and apiv1 imports nothing
// but the standard library, so the plugin's binary links none of the
// server.

// clientKey is a client as the reports' client dimension names it:
// name@version, or the name alone without a version.
func clientKey(name, version string) string {
	if version == "" {
		return name
	}
	return name + "@" + version
}

func rejectionClient(r apiv1.RejectionRow) string { return clientKey(r.ClientName, r.ClientVersion) }

func violationClient(r apiv1.ViolationRow) string { return clientKey(r.ClientName, r.ClientVersion) }

func auditClient(r apiv1.AuditRow) string { return clientKey(r.ClientName, r.ClientVersion) }

// auditStale reports whether the call executed under another revision than
// the one its client planned with.
func auditStale(r apiv1.AuditRow) bool {
	return r.RevisionClient != "" && r.RevisionServer != "" && r.RevisionClient != r.RevisionServer
}
