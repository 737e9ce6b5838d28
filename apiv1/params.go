package apiv1

// The query parameters of /api/v1, by name. The server reads them under
// these names and describes them in its OpenAPI document; the CLI and the
// Grafana plugin send them under the same names.
const (
	// ParamFrom and ParamTo bound a report's window: RFC 3339 times, dates,
	// "now" or times relative to now ("-7d"); ParamWindow is a duration
	// ending at ParamTo, in place of ParamFrom.
	ParamFrom   = "from"
	ParamTo     = "to"
	ParamWindow = "window"

	// The filters every report takes.
	ParamTool          = "tool"
	ParamService       = "service"
	ParamEnvironment   = "environment"
	ParamClient        = "client"
	ParamExcludeClient = "exclude_client" // repeatable

	// The answer's form and its pages.
	ParamFormat = "format"
	ParamWidth  = "width"
	ParamLimit  = "limit"
	ParamCursor = "cursor"

	// The adapter-retirement thresholds (Thresholds) and options.
	ParamMaxCalls       = "max_calls"
	ParamMaxShare       = "max_share"
	ParamLongSession    = "long_session"
	ParamUnknownCallers = "unknown_callers"
	ParamAdapter        = "adapter"
	ParamTopClients     = "top_clients"

	// The audit's keys.
	ParamRun       = "run"
	ParamSession   = "session"
	ParamRequestID = "request_id"

	// Series.
	ParamStep    = "step"
	ParamGroupBy = "group_by" // repeatable

	// The registry's diff of two revisions.
	ParamOld = "old"
	ParamNew = "new"
)
