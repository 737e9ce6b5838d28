package apiv1

import (
	"encoding/json"
	"time"
)

// The registry of advertised definitions as the API answers it
// (internal/registry computes these), and the release check's findings
// and verdicts (internal/toolchange computes those) that a revision's
// change carries.

// RevisionsBody is the JSON body GET /api/v1/tools/{tool}/revisions
// answers: the tool's revisions as each service advertised them in each
// environment, from the registry of advertised definitions.
type RevisionsBody struct {
	Tool      string            `json:"tool"`
	Histories []RevisionHistory `json:"histories"`
}

// RevisionHistory is the revisions of one tool as one service advertised
// them in one environment, oldest first.
type RevisionHistory struct {
	Tool        string     `json:"tool"`
	Service     string     `json:"service"`
	Environment string     `json:"environment"`
	Revisions   []Revision `json:"revisions"`
}

// Revision is one revision in a tool's history.
type Revision struct {
	Revision string `json:"revision"`
	// Algorithm is how the revision was made, as its form says
	// (otelschema.AlgorithmOf): mcpdrift-v1, sha256-jcs-tool (a SEP-2636
	// tool digest) or declared; AlgorithmLabel says it for a person.
	Algorithm       string    `json:"algorithm"`
	AlgorithmLabel  string    `json:"algorithm_label"`
	FirstAdvertised time.Time `json:"first_advertised"`
	LastAdvertised  time.Time `json:"last_advertised"`
	// Instances is how many service instances advertised it; InstanceIDs
	// names them.
	Instances   int      `json:"instances"`
	InstanceIDs []string `json:"instance_ids"`
	// Advertisements is how many advertisements the registry merged.
	Advertisements uint64 `json:"advertisements"`
	// ListTTLMs is the longest ttlMs (SEP-2549) of the tools/list results
	// the revision was advertised in: how long a client may keep a list
	// holding it without listing again; ListCacheScope is the cacheScope
	// sent with it. Both are left out when no list carried a hint.
	ListTTLMs      int64  `json:"list_ttl_ms,omitempty"`
	ListCacheScope string `json:"list_cache_scope,omitempty"`
	// Previous is the revision advertised before it, "" for the first.
	Previous string `json:"previous,omitempty"`
	// OverlapS is how long, in seconds, both it and Previous were
	// advertised: from its first advertisement to Previous's last, 0 when
	// Previous was last advertised before it came; null for the first
	// revision. A server re-advertises periodically (mcpgo's
	// Advertise), so the figure is as fine as that period.
	OverlapS *int64 `json:"overlap_s"`
	// Change is the change from Previous; null for the first revision,
	// and when either stored definition cannot be read as a tools/list
	// tool (one without an inputSchema object, say).
	Change *RevisionChange `json:"change"`
}

// RevisionChange is the change between two revisions, as the release
// check classifies it; registry.Diff carries it too.
type RevisionChange struct {
	// Class is the seed's class: "" when the definitions do not differ in
	// what the check compares, additive, bounded_migration, semantic,
	// authority or removal.
	Class string `json:"class"`
	// Summary says the change in one line, such as "added required
	// `region`".
	Summary string  `json:"summary"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason"`
	// OldArguments says whether every argument object valid under the
	// older revision stays valid, with a counterexample when not.
	OldArguments *Compatibility `json:"old_arguments,omitempty"`
	Findings     []Finding      `json:"findings,omitempty"`
}

// Verdict is what the check asks of a tool's change: safe,
// needs_decision or violation (toolchange.VerdictSafe and its like).
type Verdict string

// Area is the part of a tool definition a finding is about: tool, input,
// output or annotations (toolchange.AreaTool and its like).
type Area string

// Finding is one difference between the old and the new definition.
type Finding struct {
	// Area is the part of the definition it is about.
	Area Area `json:"area"`
	// Kind names the difference, e.g. required_added, output_field_renamed.
	Kind string `json:"kind"`
	// Path is the field it is about, as a dotted path ("issue.id"; "[]"
	// for array items), "" for the whole tool.
	Path string `json:"path,omitempty"`
	// Class is the change class the difference implies.
	Class string `json:"class"`
	// Detail says it for people, in one sentence.
	Detail string `json:"detail"`
}

// Answer is the answer to "is every instance valid under the old schema
// still valid under the new one?".
type Answer string

// Compatibility answers the question for one pair of schemas.
type Compatibility struct {
	// Answer is yes, no or cannot_decide.
	Answer Answer `json:"answer"`
	// Reason says why, for people: the first obstacle to a proof, or what
	// makes the witness invalid.
	Reason string `json:"reason,omitempty"`
	// Witness is, when the answer is no, an instance valid under the old
	// schema and invalid under the new one.
	Witness json.RawMessage `json:"witness,omitempty"`
}
