package simulate

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// sessionKey is the caller key of an event: the session, or the run on
// protocols without sessions.
func sessionKey(e *otelschema.Event) string {
	if e.SessionID != "" {
		return e.SessionID
	}
	return e.RunID
}

// checkRules checks the seed's rules on a stream and returns the
// violations it detects by kind, as a report would find them from the
// events alone.
func checkRules(t *testing.T, cfg Config, recs []Record) map[Violation]int64 {
	t.Helper()
	found := map[Violation]int64{}
	errs := 0
	fail := func(i int, format string, args ...any) {
		t.Helper()
		if errs++; errs <= 20 {
			t.Errorf("event %d: %s", i, fmt.Sprintf(format, args...))
		}
	}
	type ref struct{ key, req string }
	calls := map[ref]*otelschema.Event{}
	repairs := map[ref]*Record{}
	declared := map[string]string{} // adapter id → tool
	start, end := cfg.Start.UnixNano(), cfg.Start.Add(cfg.Span+maxFollowUp).UnixNano()
	for i := range recs {
		if e := &recs[i].Event; e.Name == otelschema.EventRepair {
			repairs[ref{sessionKey(e), e.RequestID}] = &recs[i]
		}
	}
	for i := range recs {
		r := &recs[i]
		e := &r.Event
		if e.Time < start || e.Time > end {
			fail(i, "time %s outside the simulated span", time.Unix(0, e.Time).UTC())
		}
		if e.Service == "" || e.ServiceVersion == "" || e.Environment == "" {
			fail(i, "resource incomplete: %q %q %q", e.Service, e.ServiceVersion, e.Environment)
		}
		if e.ProtocolVersion == protocolStateless {
			if e.SessionID != "" || e.RunID == "" || e.ClientName == "" || e.ClientVersion == "" {
				fail(i, "protocol %s event with session %q, run %q, client %q@%q", e.ProtocolVersion, e.SessionID, e.RunID, e.ClientName, e.ClientVersion)
			}
		} else if e.ProtocolVersion != "" && (e.SessionID == "" || e.RunID == "") {
			fail(i, "protocol %s event without a session or run id", e.ProtocolVersion)
		}
		switch e.Name {
		case otelschema.EventAdapter:
			if e.Tool == "" || e.AdapterID == "" || e.AdapterRevisionFrom == "" || e.AdapterRevisionTo == "" {
				fail(i, "adapter event incomplete: %+v", e)
			}
			declared[e.AdapterID] = e.Tool
		case otelschema.EventCall:
			key := ref{sessionKey(e), e.RequestID}
			if e.Tool == "" || e.Outcome == otelschema.OutcomeUnspecified || e.RequestID == "" {
				fail(i, "call without tool, outcome or request id")
			}
			if calls[key] != nil {
				fail(i, "request id %s reused in %s", e.RequestID, key.key)
			}
			calls[key] = e
			rejected := e.Outcome == otelschema.OutcomeRejectedStale || e.Outcome == otelschema.OutcomeRejectedIncompatible
			switch e.Outcome {
			case otelschema.OutcomeRejectedStale:
				if e.ErrorCode != ErrorCodeStale || e.RequiredAction != ActionRefreshTools {
					fail(i, "rejected_stale with error %q, action %q", e.ErrorCode, e.RequiredAction)
				}
			case otelschema.OutcomeRejectedIncompatible:
				if e.ChangeClass != otelschema.ChangeClassSemantic {
					fail(i, "rejected_incompatible of class %s", e.ChangeClass)
				}
			case otelschema.OutcomeNormalized:
				if tool, ok := declared[e.AdapterID]; !ok || tool != e.Tool {
					fail(i, "normalized by adapter %q not declared for %s", e.AdapterID, e.Tool)
				}
			case otelschema.OutcomeRemoved:
				if e.ErrorCode != ErrorCodeRemoved || e.SideEffectStarted || e.ExternalRequests != 0 {
					fail(i, "removed call with error %q, side effect %v", e.ErrorCode, e.SideEffectStarted)
				}
			}
			if e.ChangeClass == otelschema.ChangeClassAuthority && e.RetryOf == "" && !rejected {
				fail(i, "old call across an authority change ran: %s", e.Outcome)
			}
			if rejected && (e.SideEffectStarted || e.ExternalRequests != 0) {
				found[ViolationSideEffectOnRejection]++
				if r.Violation != ViolationSideEffectOnRejection {
					fail(i, "rejected call with a side effect, not injected")
				}
			}
			if e.RevisionValidated != "" && e.RevisionValidated != e.RevisionServer {
				found[ViolationMixedRevision]++
			}
			if e.ChangeClass == otelschema.ChangeClassRemoval &&
				(e.Outcome == otelschema.OutcomeCurrent || e.Outcome == otelschema.OutcomeNormalized) {
				found[ViolationRemovedSuccess]++
			}
			if e.RetryOf != "" {
				orig := calls[ref{key.key, e.RetryOf}]
				switch {
				case e.RetryOf == e.RequestID || e.RetryAttempt < 1:
					fail(i, "retry %s of %s, attempt %d", e.RequestID, e.RetryOf, e.RetryAttempt)
				case orig == nil:
					fail(i, "retry of unknown request %s", e.RetryOf)
				case orig.Outcome == otelschema.OutcomeCurrent || orig.Outcome == otelschema.OutcomeNormalized:
					fail(i, "retry of a call that succeeded")
				case orig.ChangeClass == otelschema.ChangeClassSemantic || orig.ChangeClass == otelschema.ChangeClassAuthority:
					// Only a person may send it again, unless the retry
					// was injected as a violation.
					rep := repairs[ref{key.key, e.RetryOf}]
					if rep == nil {
						fail(i, "retry without a repair")
					} else if e.Approval != otelschema.ApprovalPerCall && rep.Violation != ViolationAutoRetryAcrossChange {
						fail(i, "retry across a %s change with approval %s after %s", orig.ChangeClass, e.Approval, rep.Event.RepairAction)
					}
				}
			}
		case otelschema.EventRepair:
			orig := calls[ref{sessionKey(e), e.RequestID}]
			if orig == nil {
				fail(i, "repair of unknown request %s", e.RequestID)
				continue
			}
			if e.RepairAction == otelschema.RepairActionUnspecified || e.RepairResult == otelschema.RepairResultUnspecified {
				fail(i, "repair without action or result")
			}
			semantic := e.ChangeClass == otelschema.ChangeClassSemantic || e.ChangeClass == otelschema.ChangeClassAuthority
			if e.RepairAutomatic && semantic {
				found[ViolationAutoRetryAcrossChange]++
			}
			if e.RepairAction == otelschema.RepairActionRefreshRetry {
				// The seed's four conditions: stale schema identified, a
				// deterministic default, the same authority, no effect.
				ok := orig.Outcome == otelschema.OutcomeRejectedStale && orig.ErrorCode == ErrorCodeStale &&
					orig.ChangeClass == otelschema.ChangeClassBoundedMigration && !orig.SideEffectStarted
				if !ok && r.Violation != ViolationAutoRetryAcrossChange {
					fail(i, "automatic refresh-and-retry after %s %s (%s), side effect %v",
						orig.Outcome, orig.ChangeClass, orig.ErrorCode, orig.SideEffectStarted)
				}
			}
		case otelschema.EventRefresh:
			if e.RefreshResult == otelschema.RefreshResultUnspecified || e.RevisionBefore == "" {
				fail(i, "refresh without result or revision before")
			}
		case otelschema.EventContractError:
			if e.ContractField == "" || e.RevisionClient == e.RevisionServer {
				fail(i, "contract error without field or revision change")
			}
		case otelschema.EventListChanged:
			if r.Client && e.NotificationLagMs <= 0 {
				fail(i, "received list_changed without lag")
			}
		}
	}
	return found
}

func TestSeedRulesHold(t *testing.T) {
	cfg := testConfig(300_000, 0)
	recs, l := generate(t, cfg)
	found := checkRules(t, cfg, recs)
	if len(found) != 0 || len(l.Violations) != 0 {
		t.Errorf("violations without injection: found %v, ledger %v", found, l.Violations)
	}
}

func TestInjectedViolationsAreCounted(t *testing.T) {
	cfg := testConfig(300_000, 0.05)
	recs, l := generate(t, cfg)
	found := checkRules(t, cfg, recs)
	for v := ViolationSideEffectOnRejection; v <= ViolationAutoRetryAcrossChange; v++ {
		if found[v] == 0 {
			t.Errorf("no %s violation injected at rate %g", v, cfg.ViolationRate)
		}
		if found[v] != l.Violations[v.String()] {
			t.Errorf("%s: found %d in the stream, ledger says %d", v, found[v], l.Violations[v.String()])
		}
	}
}
