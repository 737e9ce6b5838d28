package otelschema

// Enumerations of the conventions. Each type's zero value means "not set";
// the wire values are the lowercase strings below, and unknown wire values
// are rejected with the list of accepted ones.

// Outcome is the drift outcome of a tools/call (dev.mcpdrift.outcome).
type Outcome uint8

// Outcomes.
const (
	OutcomeUnspecified          Outcome = iota
	OutcomeCurrent                      // ran unadapted under the executing revision (planned with it when the client revision says so; unknown without one)
	OutcomeNormalized                   // an adapter normalised an older shape
	OutcomeRejectedStale                // rejected with a repairable STALE_TOOL_SCHEMA error
	OutcomeRejectedIncompatible         // rejected: the old shape cannot be served safely
	OutcomeRejectedInvalid              // rejected: invalid arguments, whatever the revision
	OutcomeRemoved                      // the tool no longer exists
	OutcomeFailed                       // the call failed for another reason
)

var outcomeNames = []string{"", "current", "normalized", "rejected_stale", "rejected_incompatible", "rejected_invalid", "removed", "failed"}

// ChangeClass is the seed's classification of a contract change
// (dev.mcpdrift.change.class).
type ChangeClass uint8

// Change classes.
const (
	ChangeClassUnspecified      ChangeClass = iota
	ChangeClassAdditive                     // old calls stay valid and keep their meaning
	ChangeClassBoundedMigration             // syntax changed, with a safe deterministic transform
	ChangeClassSemantic                     // a field's meaning changed
	ChangeClassAuthority                    // what the call may do changed
	ChangeClassRemoval                      // the tool or field was removed
)

var changeClassNames = []string{"", "additive", "bounded_migration", "semantic", "authority", "removal"}

// RepairAction is what a client did after a stale rejection
// (dev.mcpdrift.repair.action).
type RepairAction uint8

// Repair actions.
const (
	RepairActionUnspecified   RepairAction = iota
	RepairActionRefreshRetry               // refreshed tools/list and retried automatically
	RepairActionModelRepair                // asked the model to repair the arguments
	RepairActionHumanApproval              // asked a person
	RepairActionAbandon                    // gave up
)

var repairActionNames = []string{"", "refresh_retry", "model_repair", "human_approval", "abandon"}

// RepairResult is the result of a repair (dev.mcpdrift.repair.result).
type RepairResult uint8

// Repair results.
const (
	RepairResultUnspecified RepairResult = iota
	RepairResultSuccess
	RepairResultFailure
)

var repairResultNames = []string{"", "success", "failure"}

// Approval is the approval decision a call ran under (dev.mcpdrift.approval).
type Approval uint8

// Approval decisions.
const (
	ApprovalUnspecified Approval = iota
	ApprovalNone                 // no approval was required
	ApprovalSession              // approved once for the session
	ApprovalPerCall              // approved for this call
	ApprovalDenied               // a person denied it
)

var approvalNames = []string{"", "none", "session", "per_call", "denied"}

// Privilege is the highest privilege a call needs (dev.mcpdrift.privilege).
// The order of the constants is the order of privilege.
type Privilege uint8

// Privileges, lowest first.
const (
	PrivilegeUnspecified  Privilege = iota
	PrivilegeRead                   // reads only
	PrivilegeWrite                  // changes state
	PrivilegeDestructive            // deletes or overwrites
	PrivilegeCredentialed           // acts with credentials on an external system
)

var privilegeNames = []string{"", "read", "write", "destructive", "credentialed"}

// RefreshResult is the result of a tools/list refresh
// (dev.mcpdrift.refresh.result).
type RefreshResult uint8

// Refresh results.
const (
	RefreshResultUnspecified RefreshResult = iota
	RefreshResultOK
	RefreshResultFailed
)

var refreshResultNames = []string{"", "ok", "failed"}

// RevisionSource is where the client revision of a call came from
// (dev.mcpdrift.revision.client.source). Unset with a client revision means
// the emitter did not say, which readers take as declared (the only source
// before the attribute existed); unset without one means unknown.
type RevisionSource uint8

// Revision sources, most direct first.
const (
	RevisionSourceUnspecified RevisionSource = iota
	RevisionSourceDeclared                   // the client declared it in the call's _meta
	RevisionSourceListed                     // what this server last listed to the session
	RevisionSourceInferred                   // from the arguments, against the revisions the server knows
)

var revisionSourceNames = []string{"", "declared", "listed", "inferred"}

// ClientView marks a call seen only from the client's side: a CLIENT span of
// tools/call, such as the Python SDK v2 sends by default (`MCP send tools/call
// {tool}`). The server's own span of the same call, when it comes, is the
// authoritative one, so the store holds a client view back (held) and counts
// it only when no server span of the call arrived within a hold time
// (alone). No attribute sets it: the span's kind does.
type ClientView uint8

// Client views.
const (
	ClientViewNone  ClientView = iota // not a client view: a server's span, a log record
	ClientViewHeld                    // a client view, held back until its server twin is known to be absent
	ClientViewAlone                   // a client view released as the call's only record
)

var clientViewNames = []string{"", "held", "alone"}

// String returns the wire value of the Outcome, "" when it is unset.
func (v Outcome) String() string { return enumString(outcomeNames, v) }

// String returns the wire value of the ChangeClass, "" when it is unset.
func (v ChangeClass) String() string { return enumString(changeClassNames, v) }

// String returns the wire value of the RepairAction, "" when it is unset.
func (v RepairAction) String() string { return enumString(repairActionNames, v) }

// String returns the wire value of the RepairResult, "" when it is unset.
func (v RepairResult) String() string { return enumString(repairResultNames, v) }

// String returns the wire value of the Approval, "" when it is unset.
func (v Approval) String() string { return enumString(approvalNames, v) }

// String returns the wire value of the Privilege, "" when it is unset.
func (v Privilege) String() string { return enumString(privilegeNames, v) }

// String returns the wire value of the RefreshResult, "" when it is unset.
func (v RefreshResult) String() string { return enumString(refreshResultNames, v) }

// String returns the wire value of the RevisionSource, "" when it is unset.
func (v RevisionSource) String() string { return enumString(revisionSourceNames, v) }

// String returns the stored value of the ClientView, "" when it is none.
func (v ClientView) String() string { return enumString(clientViewNames, v) }

// ParseOutcome returns the Outcome for its wire value.
func ParseOutcome(s string) (Outcome, bool) { return enumParse[Outcome](outcomeNames, s) }

// ParseChangeClass returns the ChangeClass for its wire value.
func ParseChangeClass(s string) (ChangeClass, bool) {
	return enumParse[ChangeClass](changeClassNames, s)
}

// ParseRepairAction returns the RepairAction for its wire value.
func ParseRepairAction(s string) (RepairAction, bool) {
	return enumParse[RepairAction](repairActionNames, s)
}

// ParseRepairResult returns the RepairResult for its wire value.
func ParseRepairResult(s string) (RepairResult, bool) {
	return enumParse[RepairResult](repairResultNames, s)
}

// ParseApproval returns the Approval for its wire value.
func ParseApproval(s string) (Approval, bool) { return enumParse[Approval](approvalNames, s) }

// ParsePrivilege returns the Privilege for its wire value.
func ParsePrivilege(s string) (Privilege, bool) { return enumParse[Privilege](privilegeNames, s) }

// ParseRefreshResult returns the RefreshResult for its wire value.
func ParseRefreshResult(s string) (RefreshResult, bool) {
	return enumParse[RefreshResult](refreshResultNames, s)
}

// ParseRevisionSource returns the RevisionSource for its wire value.
func ParseRevisionSource(s string) (RevisionSource, bool) {
	return enumParse[RevisionSource](revisionSourceNames, s)
}

func enumString[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return ""
}

func enumParse[T ~uint8](names []string, s string) (T, bool) {
	for i := 1; i < len(names); i++ {
		if names[i] == s {
			return T(i), true
		}
	}
	return 0, false
}
