package otelschema

import "strings"

// LegacyPrefix prefixed mcpdrift's own event and attribute names in the
// releases before EventNamePrefix: those names sat inside the mcp.*
// namespace that the OpenTelemetry conventions reserve.
const LegacyPrefix = "mcp.drift."

// legacyName is a name of an earlier release that the decoder still reads,
// and the name it is read as.
type legacyName struct {
	old, now string
	event    EventName // the event an old event name is read as; 0 for an attribute
}

// The names of earlier releases, events first, then attributes in registry
// order: every name under EventNamePrefix under LegacyPrefix instead, and
// the client identity, which was mcp.client.name and mcp.client.version
// though no convention defines them.
var (
	legacyNames = func() []legacyName {
		var out []legacyName
		for e := EventName(1); int(e) < len(eventNames); e++ {
			out = append(out, legacyName{old: e.Stored(), now: e.String(), event: e})
		}
		for i := range registry {
			n := registry[i].Name
			switch n {
			case AttrClientName:
				out = append(out, legacyName{old: "mcp.client.name", now: n})
			case AttrClientVersion:
				out = append(out, legacyName{old: "mcp.client.version", now: n})
			default:
				if rest, ok := strings.CutPrefix(n, EventNamePrefix); ok {
					out = append(out, legacyName{old: LegacyPrefix + rest, now: n})
				}
			}
		}
		return append(out, legacyName{old: LegacyPrefix + OutcomeInferredAttr[len(EventNamePrefix):], now: OutcomeInferredAttr})
	}()
	// legacyEvent and legacyAttr index legacyNames by old name.
	legacyEvent, legacyAttr = func() (ev, at map[string]int) {
		ev, at = map[string]int{}, map[string]int{}
		for i, l := range legacyNames {
			if l.event != EventUnspecified {
				ev[l.old] = i
			} else {
				at[l.old] = i
			}
		}
		return ev, at
	}()
)

// LegacyNames returns the names of earlier releases that the decoder still
// reads, in the order of Result.Legacy: each is read as the name
// CurrentName gives, and counted, so that an operator sees from the
// ingester's metrics when the senders have moved. They are read for at
// least one release after the move.
func LegacyNames() []string {
	out := make([]string, len(legacyNames))
	for i, l := range legacyNames {
		out[i] = l.old
	}
	return out
}

// CurrentName returns the name an old name is read as, and whether name is
// one of LegacyNames.
func CurrentName(name string) (string, bool) {
	if i, ok := legacyEvent[name]; ok {
		return legacyNames[i].now, true
	}
	if i, ok := legacyAttr[name]; ok {
		return legacyNames[i].now, true
	}
	return "", false
}

// lookupAttr returns the attribute of the conventions a key names, nil for
// any other key, and, when the key is a name of an earlier release, its
// index in legacyNames plus one (0 otherwise).
func lookupAttr(k string) (*Attribute, int) {
	if a := attrByName[k]; a != nil {
		return a, 0
	}
	if i, ok := legacyAttr[k]; ok {
		return attrByName[legacyNames[i].now], i + 1
	}
	return nil, 0
}

// countLegacy counts one use of the name of earlier releases at index
// i-1; i is 0 for a current name.
func (st *decodeState) countLegacy(i int) {
	if i == 0 {
		return
	}
	if st.legacy == nil {
		st.legacy = make([]int, len(legacyNames))
	}
	st.legacy[i-1]++
}
