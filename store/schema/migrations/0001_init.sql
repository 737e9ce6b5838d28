-- Version 1: the raw drift events, the call audit, the adapter registry and
-- the first rollup. Events are inserted once into events_in (engine Null);
-- materialised views fan them out, so one INSERT feeds every table.

CREATE TABLE IF NOT EXISTS {{table "events_in"}}{{.OnCluster}}
(
    tenant                LowCardinality(String),
    event_id              UInt64,
    event_name            {{.EventNameEnum}},
    time                  DateTime64(9, 'UTC'),
    trace_id              FixedString(16),
    span_id               FixedString(8),
    service               LowCardinality(String),
    service_version       LowCardinality(String),
    service_instance      LowCardinality(String),
    service_namespace     LowCardinality(String),
    environment           LowCardinality(String),
    tool                  LowCardinality(String),
    method                LowCardinality(String),
    request_id            String,
    session_id            String,
    protocol_version      LowCardinality(String),
    client_name           LowCardinality(String),
    client_version        LowCardinality(String),
    revision_client       LowCardinality(String),
    revision_server       LowCardinality(String),
    revision_validated    LowCardinality(String),
    revision_before       LowCardinality(String),
    revision_after        LowCardinality(String),
    outcome               {{.OutcomeEnum}},
    adapter_id            LowCardinality(String),
    change_class          {{.ChangeClassEnum}},
    side_effect_started   Bool,
    external_requests     Int64,
    external_target       LowCardinality(String),
    error_code            LowCardinality(String),
    required_action       LowCardinality(String),
    retry_of              String,
    retry_attempt         Int64,
    idempotency_key       String,
    repair_action         {{.RepairActionEnum}},
    repair_automatic      Bool,
    repair_result         {{.RepairResultEnum}},
    repair_duration_ms    Int64,
    approval              {{.ApprovalEnum}},
    privilege             {{.PrivilegeEnum}},
    run_id                String,
    session_age_s         Int64,
    refresh_result        {{.RefreshResultEnum}},
    notification_lag_ms   Int64,
    adapter_revision_from LowCardinality(String),
    adapter_revision_to   LowCardinality(String),
    adapter_window_end    DateTime('UTC'),
    contract_field        LowCardinality(String),
    args_raw              String,
    args_normalized       String,
    attributes            Map(LowCardinality(String), String)
)
ENGINE = Null;
{{distributed "events_in"}}

-- The raw events, without call arguments (those live in audit_calls).
-- Reports read a tenant's events of one kind for one tool over a window,
-- grouped by revision: the sort key follows that path, and similar rows
-- sit together, which is what makes them compress.
CREATE TABLE IF NOT EXISTS {{table "events"}}{{.OnCluster}}
(
    tenant                LowCardinality(String),
    event_id              UInt64 CODEC(ZSTD(1)),
    event_name            {{.EventNameEnum}},
    time                  DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    trace_id              FixedString(16) CODEC(ZSTD(1)),
    span_id               FixedString(8) CODEC(ZSTD(1)),
    service               LowCardinality(String),
    service_version       LowCardinality(String),
    service_instance      LowCardinality(String),
    service_namespace     LowCardinality(String),
    environment           LowCardinality(String),
    tool                  LowCardinality(String),
    method                LowCardinality(String),
    request_id            String CODEC(ZSTD(1)),
    session_id            String CODEC(ZSTD(1)),
    protocol_version      LowCardinality(String),
    client_name           LowCardinality(String),
    client_version        LowCardinality(String),
    revision_client       LowCardinality(String),
    revision_server       LowCardinality(String),
    revision_validated    LowCardinality(String),
    revision_before       LowCardinality(String),
    revision_after        LowCardinality(String),
    outcome               {{.OutcomeEnum}},
    adapter_id            LowCardinality(String),
    change_class          {{.ChangeClassEnum}},
    side_effect_started   Bool,
    external_requests     Int64 CODEC(T64, ZSTD(1)),
    external_target       LowCardinality(String),
    error_code            LowCardinality(String),
    required_action       LowCardinality(String),
    retry_of              String CODEC(ZSTD(1)),
    retry_attempt         Int64 CODEC(T64, ZSTD(1)),
    idempotency_key       String CODEC(ZSTD(1)),
    repair_action         {{.RepairActionEnum}},
    repair_automatic      Bool,
    repair_result         {{.RepairResultEnum}},
    repair_duration_ms    Int64 CODEC(T64, ZSTD(1)),
    approval              {{.ApprovalEnum}},
    privilege             {{.PrivilegeEnum}},
    run_id                String CODEC(ZSTD(1)),
    session_age_s         Int64 CODEC(T64, ZSTD(1)),
    refresh_result        {{.RefreshResultEnum}},
    notification_lag_ms   Int64 CODEC(T64, ZSTD(1)),
    adapter_revision_from LowCardinality(String),
    adapter_revision_to   LowCardinality(String),
    adapter_window_end    DateTime('UTC'),
    contract_field        LowCardinality(String),
    attributes            Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, event_name, tool, revision_client, revision_server, time)
TTL toDateTime(time) + INTERVAL {{.RetentionDays}} DAY;
{{distributed "events"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}} AS
SELECT * EXCEPT (args_raw, args_normalized)
FROM {{table "events_in"}};

-- The call audit: one row per tools/call with its raw and normalised
-- arguments, retained on its own schedule and read under its own scope.
CREATE TABLE IF NOT EXISTS {{table "audit_calls"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    event_id            UInt64 CODEC(ZSTD(1)),
    time                DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    service             LowCardinality(String),
    service_version     LowCardinality(String),
    environment         LowCardinality(String),
    tool                LowCardinality(String),
    request_id          String CODEC(ZSTD(1)),
    session_id          String CODEC(ZSTD(1)),
    run_id              String CODEC(ZSTD(1)),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    revision_validated  LowCardinality(String),
    outcome             {{.OutcomeEnum}},
    adapter_id          LowCardinality(String),
    approval            {{.ApprovalEnum}},
    privilege           {{.PrivilegeEnum}},
    external_target     LowCardinality(String),
    external_requests   Int64 CODEC(T64, ZSTD(1)),
    side_effect_started Bool,
    args_raw            String CODEC(ZSTD(3)),
    args_normalized     String CODEC(ZSTD(3)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, tool, time)
TTL toDateTime(time) + INTERVAL {{.AuditRetentionDays}} DAY;
{{distributed "audit_calls"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.audit_calls_mv{{.OnCluster}} TO {{table "audit_calls"}} AS
SELECT tenant, event_id, time, service, service_version, environment, tool,
       request_id, session_id, run_id, client_name, client_version,
       revision_client, revision_server, revision_validated, outcome,
       adapter_id, approval, privilege, external_target, external_requests,
       side_effect_started, args_raw, args_normalized
FROM {{table "events_in"}}
WHERE event_name = 'mcp.drift.call';

-- The adapter registry as the servers declare it: the latest declaration of
-- each adapter wins.
CREATE TABLE IF NOT EXISTS {{table "adapters"}}{{.OnCluster}}
(
    tenant        LowCardinality(String),
    adapter_id    LowCardinality(String),
    tool          LowCardinality(String),
    revision_from LowCardinality(String),
    revision_to   LowCardinality(String),
    change_class  {{.ChangeClassEnum}},
    window_end    DateTime('UTC'),
    service       LowCardinality(String),
    environment   LowCardinality(String),
    declared_at   DateTime64(9, 'UTC')
)
ENGINE = {{engine "ReplacingMergeTree" "declared_at"}}
ORDER BY (tenant, adapter_id);
{{distributed "adapters"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapters_mv{{.OnCluster}} TO {{table "adapters"}} AS
SELECT tenant, adapter_id, tool, adapter_revision_from AS revision_from,
       adapter_revision_to AS revision_to, change_class,
       adapter_window_end AS window_end, service, environment,
       time AS declared_at
FROM {{table "events_in"}}
WHERE event_name = 'mcp.drift.adapter';

-- First rollup: calls per hour by tool, revisions, outcome, adapter and
-- caller. Distinct sessions and runs as uniq states, first and last seen as
-- min/max.
CREATE TABLE IF NOT EXISTS {{table "calls_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             {{.OutcomeEnum}},
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           {{.PrivilegeEnum}},
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
          service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "calls_1h"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       uniqState(if(session_id != '', session_id, run_id)) AS sessions,
       uniqState(run_id) AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege;
