CREATE DATABASE IF NOT EXISTS mcpdrift;

CREATE TABLE IF NOT EXISTS mcpdrift.schema_migrations
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version;

CREATE TABLE IF NOT EXISTS mcpdrift.schema_lock
(
    seq   UInt64,
    owner String,
    at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY seq
SETTINGS non_replicated_deduplication_window = 1000;

INSERT INTO mcpdrift.schema_lock (seq, owner)
SETTINGS insert_deduplicate = 1, insert_deduplication_token = 'schema_lock_1'
VALUES ({seq:UInt64}, {owner:String})

-- params: owner=<owner>, seq=1;

CREATE TABLE IF NOT EXISTS mcpdrift.events_in
(
    tenant                LowCardinality(String),
    event_id              UInt64,
    event_name            Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
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
    outcome               Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id            LowCardinality(String),
    change_class          Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    side_effect_started   Bool,
    external_requests     Int64,
    external_target       LowCardinality(String),
    error_code            LowCardinality(String),
    required_action       LowCardinality(String),
    retry_of              String,
    retry_attempt         Int64,
    idempotency_key       String,
    repair_action         Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    repair_automatic      Bool,
    repair_result         Enum8('' = 0, 'success' = 1, 'failure' = 2),
    repair_duration_ms    Int64,
    approval              Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    privilege             Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    run_id                String,
    session_age_s         Int64,
    refresh_result        Enum8('' = 0, 'ok' = 1, 'failed' = 2),
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

CREATE TABLE IF NOT EXISTS mcpdrift.events
(
    tenant                LowCardinality(String),
    event_id              UInt64 CODEC(ZSTD(1)),
    event_name            Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
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
    outcome               Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id            LowCardinality(String),
    change_class          Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    side_effect_started   Bool,
    external_requests     Int64 CODEC(T64, ZSTD(1)),
    external_target       LowCardinality(String),
    error_code            LowCardinality(String),
    required_action       LowCardinality(String),
    retry_of              String CODEC(ZSTD(1)),
    retry_attempt         Int64 CODEC(T64, ZSTD(1)),
    idempotency_key       String CODEC(ZSTD(1)),
    repair_action         Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    repair_automatic      Bool,
    repair_result         Enum8('' = 0, 'success' = 1, 'failure' = 2),
    repair_duration_ms    Int64 CODEC(T64, ZSTD(1)),
    approval              Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    privilege             Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    run_id                String CODEC(ZSTD(1)),
    session_age_s         Int64 CODEC(T64, ZSTD(1)),
    refresh_result        Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    notification_lag_ms   Int64 CODEC(T64, ZSTD(1)),
    adapter_revision_from LowCardinality(String),
    adapter_revision_to   LowCardinality(String),
    adapter_window_end    DateTime('UTC'),
    contract_field        LowCardinality(String),
    attributes            Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, event_name, tool, revision_client, revision_server, time)
TTL toDateTime(time) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.events_mv TO mcpdrift.events AS
SELECT * EXCEPT (args_raw, args_normalized)
FROM mcpdrift.events_in;

CREATE TABLE IF NOT EXISTS mcpdrift.audit_calls
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
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    approval            Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    external_target     LowCardinality(String),
    external_requests   Int64 CODEC(T64, ZSTD(1)),
    side_effect_started Bool,
    args_raw            String CODEC(ZSTD(3)),
    args_normalized     String CODEC(ZSTD(3)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, tool, time)
TTL toDateTime(time) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.audit_calls_mv TO mcpdrift.audit_calls AS
SELECT tenant, event_id, time, service, service_version, environment, tool,
       request_id, session_id, run_id, client_name, client_version,
       revision_client, revision_server, revision_validated, outcome,
       adapter_id, approval, privilege, external_target, external_requests,
       side_effect_started, args_raw, args_normalized
FROM mcpdrift.events_in
WHERE event_name = 'mcp.drift.call';

CREATE TABLE IF NOT EXISTS mcpdrift.adapters
(
    tenant        LowCardinality(String),
    adapter_id    LowCardinality(String),
    tool          LowCardinality(String),
    revision_from LowCardinality(String),
    revision_to   LowCardinality(String),
    change_class  Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    window_end    DateTime('UTC'),
    service       LowCardinality(String),
    environment   LowCardinality(String),
    declared_at   DateTime64(9, 'UTC')
)
ENGINE = ReplacingMergeTree(declared_at)
ORDER BY (tenant, adapter_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapters_mv TO mcpdrift.adapters AS
SELECT tenant, adapter_id, tool, adapter_revision_from AS revision_from,
       adapter_revision_to AS revision_to, change_class,
       adapter_window_end AS window_end, service, environment,
       time AS declared_at
FROM mcpdrift.events_in
WHERE event_name = 'mcp.drift.adapter';

CREATE TABLE IF NOT EXISTS mcpdrift.calls_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
          service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
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
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=60a3877ff7215b3322198f5b014caafcae3da2c05355495d9912c6ba2cab6334, name=init, version=1;

ALTER TABLE mcpdrift.calls_1h
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER privilege,
    MODIFY ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
                     service, environment, client_name, client_version, privilege, error_code);

ALTER TABLE mcpdrift.calls_1h
    ADD COLUMN IF NOT EXISTS retries SimpleAggregateFunction(sum, UInt64) AFTER side_effects;

DROP VIEW IF EXISTS mcpdrift.calls_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqStateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE TABLE IF NOT EXISTS mcpdrift.calls_1m
(
    tenant              LowCardinality(String),
    minute              DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, minute,
          service, environment, client_name, client_version, privilege, error_code)
TTL minute + INTERVAL 2 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1m_mv TO mcpdrift.calls_1m AS
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqStateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, minute, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE TABLE IF NOT EXISTS mcpdrift.calls_1d
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, day,
          service, environment, client_name, client_version, privilege, error_code)
TTL day + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1d_mv TO mcpdrift.calls_1d AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

INSERT INTO mcpdrift.calls_1d
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls), sum(side_effects), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       min(first_seen), max(last_seen), max(max_session_age_s)
FROM mcpdrift.calls_1h
WHERE (SELECT count() FROM mcpdrift.calls_1d) = 0
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

INSERT INTO mcpdrift.calls_1m
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count(), countIf(side_effect_started), countIf(retry_of != ''),
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != ''),
       uniqStateIf(run_id, run_id != ''),
       min(time), max(time), max(session_age_s)
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM mcpdrift.calls_1m) = 0
GROUP BY tenant, minute, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE TABLE IF NOT EXISTS mcpdrift.repairs_1m
(
    tenant              LowCardinality(String),
    minute              DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    repair_action       Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    repair_automatic    Bool,
    repair_result       Enum8('' = 0, 'success' = 1, 'failure' = 2),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          minute, service, environment, client_name, client_version)
TTL minute + INTERVAL 2 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.repairs_1m_mv TO mcpdrift.repairs_1m AS
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count() AS repairs,
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.repair'
GROUP BY tenant, minute, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

CREATE TABLE IF NOT EXISTS mcpdrift.repairs_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    repair_action       Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    repair_automatic    Bool,
    repair_result       Enum8('' = 0, 'success' = 1, 'failure' = 2),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          hour, service, environment, client_name, client_version)
TTL hour + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.repairs_1h_mv TO mcpdrift.repairs_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count() AS repairs,
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.repair'
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

CREATE TABLE IF NOT EXISTS mcpdrift.repairs_1d
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    repair_action       Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    repair_automatic    Bool,
    repair_result       Enum8('' = 0, 'success' = 1, 'failure' = 2),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          day, service, environment, client_name, client_version)
TTL day + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.repairs_1d_mv TO mcpdrift.repairs_1d AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       sum(repairs) AS repairs,
       quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.repairs_1h
GROUP BY tenant, day, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

INSERT INTO mcpdrift.repairs_1h
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count(),
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0),
       min(time), max(time)
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.repair'
  AND (SELECT count() FROM mcpdrift.repairs_1h) = 0
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

INSERT INTO mcpdrift.repairs_1m
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count(),
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0),
       min(time), max(time)
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.repair'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM mcpdrift.repairs_1m) = 0
GROUP BY tenant, minute, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=6431bc8088b953b18dd7de2a08e727581824d286267c1a243b54111e8f8df2bc, name=rollups, version=2;

DROP VIEW IF EXISTS mcpdrift.calls_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
SELECT tenant, toStartOfHour(minute) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1m
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

DROP VIEW IF EXISTS mcpdrift.repairs_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.repairs_1h_mv TO mcpdrift.repairs_1h AS
SELECT tenant, toStartOfHour(minute) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       sum(repairs) AS repairs,
       quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.repairs_1m
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

CREATE TABLE IF NOT EXISTS mcpdrift.usage_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, service, environment)
TTL hour + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.usage_1d
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.rejected_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    error_code          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code,
          service, environment, client_name, client_version)
TTL hour + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.adapted_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    adapter_id          LowCardinality(String),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    calls               SimpleAggregateFunction(sum, UInt64),
    normalized          SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL 30 DAY;

INSERT INTO mcpdrift.usage_1h
SELECT tenant, hour, tool, revision_client, revision_server, service, environment,
       sum(calls), sumIf(calls, outcome = 'current'), sumIf(calls, outcome = 'normalized'),
       sumIf(calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')),
       sumIf(calls, outcome = 'rejected_stale'), sumIf(calls, outcome = 'removed'),
       sumIf(calls, outcome = 'failed'), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != ''),
       min(first_seen), max(last_seen)
FROM mcpdrift.calls_1h
WHERE (SELECT count() FROM mcpdrift.usage_1h) = 0
GROUP BY tenant, hour, tool, revision_client, revision_server, service, environment;

INSERT INTO mcpdrift.usage_1d
SELECT tenant, day, tool, revision_client, revision_server, service, environment,
       sum(calls), sumIf(calls, outcome = 'current'), sumIf(calls, outcome = 'normalized'),
       sumIf(calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')),
       sumIf(calls, outcome = 'rejected_stale'), sumIf(calls, outcome = 'removed'),
       sumIf(calls, outcome = 'failed'), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != ''),
       min(first_seen), max(last_seen)
FROM mcpdrift.calls_1d
WHERE (SELECT count() FROM mcpdrift.usage_1d) = 0
GROUP BY tenant, day, tool, revision_client, revision_server, service, environment;

INSERT INTO mcpdrift.rejected_1h
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls), sum(side_effects), uniqMergeState(sessions), min(first_seen), max(last_seen)
FROM
(
    SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
           environment, client_name, client_version, calls, side_effects, sessions, first_seen, last_seen
    FROM mcpdrift.calls_1h
    WHERE hour >= toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
    UNION ALL
    SELECT tenant, day AS hour, tool, revision_client, revision_server, outcome, error_code, service,
           environment, client_name, client_version, calls, side_effects, sessions, first_seen, last_seen
    FROM mcpdrift.calls_1d
    WHERE day < toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
)
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND (SELECT count() FROM mcpdrift.rejected_1h) = 0
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

INSERT INTO mcpdrift.adapted_1h
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(calls), sumIf(calls, outcome = 'normalized'), uniqMergeState(sessions),
       min(first_seen), max(last_seen), max(max_session_age_s)
FROM
(
    SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version,
           privilege, outcome, calls, sessions, first_seen, last_seen, max_session_age_s
    FROM mcpdrift.calls_1h
    WHERE hour >= toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
    UNION ALL
    SELECT tenant, day AS hour, adapter_id, tool, service, environment, client_name, client_version,
           privilege, outcome, calls, sessions, first_seen, last_seen, max_session_age_s
    FROM mcpdrift.calls_1d
    WHERE day < toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
)
WHERE adapter_id != ''
  AND (SELECT count() FROM mcpdrift.adapted_1h) = 0
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.usage_1h_mv TO mcpdrift.usage_1h AS
SELECT tenant, hour, tool, revision_client, revision_server, service, environment,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'current') AS calls_current,
       sumIf(c.calls, outcome = 'normalized') AS calls_normalized,
       sumIf(c.calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS calls_rejected,
       sumIf(c.calls, outcome = 'rejected_stale') AS calls_rejected_stale,
       sumIf(c.calls, outcome = 'removed') AS calls_removed,
       sumIf(c.calls, outcome = 'failed') AS calls_failed,
       sum(retries) AS retries,
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != '') AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.calls_1h AS c
GROUP BY tenant, hour, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.usage_1d_mv TO mcpdrift.usage_1d AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       service, environment,
       sum(calls) AS calls,
       sum(calls_current) AS calls_current,
       sum(calls_normalized) AS calls_normalized,
       sum(calls_rejected) AS calls_rejected,
       sum(calls_rejected_stale) AS calls_rejected_stale,
       sum(calls_removed) AS calls_removed,
       sum(calls_failed) AS calls_failed,
       sum(retries) AS retries,
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
       uniqExactMergeState(clients) AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.usage_1h
GROUP BY tenant, day, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.rejected_1h_mv TO mcpdrift.rejected_1h AS
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       uniqMergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.calls_1h
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapted_1h_mv TO mcpdrift.adapted_1h AS
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'normalized') AS normalized,
       uniqMergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=273de8f561ef241384865aff05de17438897d0661003cf3d8ec52bbe6fd552ee, name=report_rollups, version=3;

CREATE TABLE IF NOT EXISTS mcpdrift.violation_candidates
(
    tenant             LowCardinality(String),
    time               DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    event_id           UInt64 CODEC(ZSTD(1)),
    kind               LowCardinality(String),
    tool               LowCardinality(String),
    session_id         String CODEC(ZSTD(1)),
    run_id             String CODEC(ZSTD(1)),
    request_id         String CODEC(ZSTD(1)),
    client_name        LowCardinality(String),
    client_version     LowCardinality(String),
    revision_client    LowCardinality(String),
    revision_server    LowCardinality(String),
    revision_validated LowCardinality(String),
    change_class       Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    outcome            Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id         LowCardinality(String),
    service            LowCardinality(String),
    service_version    LowCardinality(String),
    environment        LowCardinality(String),
    detail             String CODEC(ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, time, event_id, kind)
TTL toDateTime(time) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_side_effect_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, 'side_effect_rejected' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome),
              if(error_code != '', concat(' with ', error_code), ''),
              ' after its side effect had started',
              if(external_target != '', concat(' on ', external_target), ''),
              if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), '')) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND side_effect_started;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_mixed_revision_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, 'mixed_revision' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat('validated under revision ', revision_validated,
              ', executed under revision ', revision_server) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND revision_validated != '' AND revision_validated != revision_server;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_removed_tool_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed ',
              if(change_class = 'removal', 'revision (change class removal)',
                 concat('tool through removal adapter ', adapter_id))) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND (change_class = 'removal' OR adapter_id != '');

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_retry_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, 'retry_across_change' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       if(event_name = 'mcp.drift.call',
          concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
                 toString(change_class)),
          concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
                 toString(change_class))) AS detail
FROM mcpdrift.events
WHERE ((event_name = 'mcp.drift.call' AND retry_of != '')
       OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
  AND repair_automatic
  AND change_class IN ('semantic', 'authority');

CREATE TABLE IF NOT EXISTS mcpdrift.propagation_events
(
    tenant         LowCardinality(String),
    kind           Enum8('notice' = 1, 'refresh' = 2, 'refresh_failed' = 3, 'stale_call' = 4),
    session        String CODEC(ZSTD(1)),
    tool           LowCardinality(String),
    time           DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    lag_ms         Int64 CODEC(T64, ZSTD(1)),
    service        LowCardinality(String),
    environment    LowCardinality(String),
    client_name    LowCardinality(String),
    client_version LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, kind, time)
TTL toDateTime(time) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.propagation_events_mv TO mcpdrift.propagation_events AS
SELECT tenant,
       multiIf(event_name = 'mcp.drift.list_changed', 'notice',
               event_name = 'mcp.drift.call', 'stale_call',
               refresh_result != 'failed', 'refresh', 'refresh_failed') AS kind,
       if(session_id != '', session_id, run_id) AS session,
       tool, time,
       if(event_name = 'mcp.drift.list_changed', notification_lag_ms, 0) AS lag_ms,
       service, environment, client_name, client_version
FROM mcpdrift.events
WHERE (session_id != '' OR run_id != '')
  AND (event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')
       OR (event_name = 'mcp.drift.call' AND revision_client != '' AND revision_client != revision_server));

INSERT INTO mcpdrift.violation_candidates
SELECT tenant, time, event_id, 'side_effect_rejected' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome),
              if(error_code != '', concat(' with ', error_code), ''),
              ' after its side effect had started',
              if(external_target != '', concat(' on ', external_target), ''),
              if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), '')) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND side_effect_started
  AND (SELECT count() FROM mcpdrift.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'mixed_revision' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat('validated under revision ', revision_validated,
              ', executed under revision ', revision_server) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND revision_validated != '' AND revision_validated != revision_server
  AND (SELECT count() FROM mcpdrift.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed ',
              if(change_class = 'removal', 'revision (change class removal)',
                 concat('tool through removal adapter ', adapter_id))) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND (change_class = 'removal' OR adapter_id != '')
  AND (SELECT count() FROM mcpdrift.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'retry_across_change' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       if(event_name = 'mcp.drift.call',
          concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
                 toString(change_class)),
          concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
                 toString(change_class))) AS detail
FROM mcpdrift.events
WHERE ((event_name = 'mcp.drift.call' AND retry_of != '')
       OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
  AND repair_automatic
  AND change_class IN ('semantic', 'authority')
  AND (SELECT count() FROM mcpdrift.violation_candidates) = 0;

INSERT INTO mcpdrift.propagation_events
SELECT tenant,
       multiIf(event_name = 'mcp.drift.list_changed', 'notice',
               event_name = 'mcp.drift.call', 'stale_call',
               refresh_result != 'failed', 'refresh', 'refresh_failed') AS kind,
       if(session_id != '', session_id, run_id) AS session,
       tool, time,
       if(event_name = 'mcp.drift.list_changed', notification_lag_ms, 0) AS lag_ms,
       service, environment, client_name, client_version
FROM mcpdrift.events
WHERE (session_id != '' OR run_id != '')
  AND (event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')
       OR (event_name = 'mcp.drift.call' AND revision_client != '' AND revision_client != revision_server))
  AND (SELECT count() FROM mcpdrift.propagation_events) = 0;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=dc852f42eedfb6e73d21eb6a0e190b61aad6c5a18cec9f17b742849000fceee4, name=report_tables, version=4;

ALTER TABLE mcpdrift.events_in
    MODIFY COLUMN tenant String,
    MODIFY COLUMN service String,
    MODIFY COLUMN service_version String,
    MODIFY COLUMN service_instance String,
    MODIFY COLUMN service_namespace String,
    MODIFY COLUMN environment String,
    MODIFY COLUMN tool String,
    MODIFY COLUMN method String,
    MODIFY COLUMN protocol_version String,
    MODIFY COLUMN client_name String,
    MODIFY COLUMN client_version String,
    MODIFY COLUMN revision_client String,
    MODIFY COLUMN revision_server String,
    MODIFY COLUMN revision_validated String,
    MODIFY COLUMN revision_before String,
    MODIFY COLUMN revision_after String,
    MODIFY COLUMN adapter_id String,
    MODIFY COLUMN external_target String,
    MODIFY COLUMN error_code String,
    MODIFY COLUMN required_action String,
    MODIFY COLUMN adapter_revision_from String,
    MODIFY COLUMN adapter_revision_to String,
    MODIFY COLUMN contract_field String,
    MODIFY COLUMN attributes Map(String, String);

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=49a83cd810128841804d36a91ccc2c5725bb8905d4b422233a7831f95a6f2b84, name=plain_input, version=5;

CREATE TABLE IF NOT EXISTS mcpdrift.adapter_call_candidates
(
    tenant             LowCardinality(String),
    time               DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    event_id           UInt64 CODEC(ZSTD(1)),
    tool               LowCardinality(String),
    session_id         String CODEC(ZSTD(1)),
    run_id             String CODEC(ZSTD(1)),
    request_id         String CODEC(ZSTD(1)),
    client_name        LowCardinality(String),
    client_version     LowCardinality(String),
    revision_client    LowCardinality(String),
    revision_server    LowCardinality(String),
    revision_validated LowCardinality(String),
    change_class       Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    outcome            Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id         LowCardinality(String),
    service            LowCardinality(String),
    service_version    LowCardinality(String),
    environment        LowCardinality(String),
    detail             String CODEC(ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, adapter_id, time, event_id)
TTL toDateTime(time) + INTERVAL 30 DAY;

DROP VIEW IF EXISTS mcpdrift.violations_removed_tool_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_removed_tool_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed revision (change class removal)') AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class = 'removal';

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapter_call_candidates_mv TO mcpdrift.adapter_call_candidates AS
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed tool through removal adapter ', adapter_id) AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class != 'removal'
  AND adapter_id != '';

INSERT INTO mcpdrift.adapter_call_candidates
SETTINGS distributed_foreground_insert = 1
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment, detail
FROM mcpdrift.violation_candidates
WHERE kind = 'removed_tool_success'
  AND change_class != 'removal'
  AND (SELECT count() FROM mcpdrift.adapter_call_candidates) = 0;

ALTER TABLE mcpdrift.violation_candidates
    DELETE WHERE kind = 'removed_tool_success' AND change_class != 'removal'
SETTINGS mutations_sync = 2;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=33b794a59eb358e1ee1d03f2e24adee2444dc566867a10d680eea581bac05649, name=adapter_call_candidates, version=6;

CREATE TABLE IF NOT EXISTS mcpdrift.recent_calls
(
    tenant              LowCardinality(String),
    time                DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    error_code          LowCardinality(String),
    side_effect_started Bool,
    retry               Bool,
    session             String CODEC(ZSTD(1)),
    run_id              String CODEC(ZSTD(1)),
    session_age_s       Int64 CODEC(T64, ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, time)
TTL toDateTime(time) + INTERVAL 2 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.recent_calls_mv TO mcpdrift.recent_calls AS
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call';

INSERT INTO mcpdrift.recent_calls
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM mcpdrift.recent_calls) = 0;

DROP VIEW IF EXISTS mcpdrift.calls_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqStateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

DROP VIEW IF EXISTS mcpdrift.calls_1m_mv;

DROP TABLE IF EXISTS mcpdrift.calls_1m;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=2c57309a79e1e45c6f9910ca5fd895403a403447c2722ae26d2ad76d0c343c2d, name=recent_calls, version=7;

DROP VIEW IF EXISTS mcpdrift.calls_1h_mv;

DROP VIEW IF EXISTS mcpdrift.calls_1d_mv;

DROP VIEW IF EXISTS mcpdrift.usage_1h_mv;

DROP VIEW IF EXISTS mcpdrift.usage_1d_mv;

DROP VIEW IF EXISTS mcpdrift.rejected_1h_mv;

DROP VIEW IF EXISTS mcpdrift.adapted_1h_mv;

DROP TABLE IF EXISTS mcpdrift.calls_1h SYNC;

DROP TABLE IF EXISTS mcpdrift.calls_1d SYNC;

DROP TABLE IF EXISTS mcpdrift.usage_1h SYNC;

DROP TABLE IF EXISTS mcpdrift.usage_1d SYNC;

DROP TABLE IF EXISTS mcpdrift.rejected_1h SYNC;

DROP TABLE IF EXISTS mcpdrift.adapted_1h SYNC;

CREATE TABLE IF NOT EXISTS mcpdrift.calls_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
          service, environment, client_name, client_version, privilege, error_code)
TTL hour + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.calls_1d
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, day,
          service, environment, client_name, client_version, privilege, error_code)
TTL day + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.usage_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, service, environment)
TTL hour + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.usage_1d
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.rejected_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    error_code          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code,
          service, environment, client_name, client_version)
TTL hour + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS mcpdrift.adapted_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    adapter_id          LowCardinality(String),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    calls               SimpleAggregateFunction(sum, UInt64),
    normalized          SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1d_mv TO mcpdrift.calls_1d AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.usage_1h_mv TO mcpdrift.usage_1h AS
SELECT tenant, hour, tool, revision_client, revision_server, service, environment,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'current') AS calls_current,
       sumIf(c.calls, outcome = 'normalized') AS calls_normalized,
       sumIf(c.calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS calls_rejected,
       sumIf(c.calls, outcome = 'rejected_stale') AS calls_rejected_stale,
       sumIf(c.calls, outcome = 'removed') AS calls_removed,
       sumIf(c.calls, outcome = 'failed') AS calls_failed,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != '') AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.calls_1h AS c
GROUP BY tenant, hour, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.usage_1d_mv TO mcpdrift.usage_1d AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       service, environment,
       sum(calls) AS calls,
       sum(calls_current) AS calls_current,
       sum(calls_normalized) AS calls_normalized,
       sum(calls_rejected) AS calls_rejected,
       sum(calls_rejected_stale) AS calls_rejected_stale,
       sum(calls_removed) AS calls_removed,
       sum(calls_failed) AS calls_failed,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       uniqExactMergeState(clients) AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.usage_1h
GROUP BY tenant, day, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.rejected_1h_mv TO mcpdrift.rejected_1h AS
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.calls_1h
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapted_1h_mv TO mcpdrift.adapted_1h AS
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'normalized') AS normalized,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

INSERT INTO mcpdrift.calls_1h
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code
SETTINGS optimize_aggregation_in_order = 1, min_insert_block_size_rows = 100000,
         max_insert_block_size = 100000, max_bytes_before_external_group_by = 2147483648;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=f4fc39c462aeaf573442c2aeec1bffb78ad829e479561db9d31fc7013f4e29bc, name=session_sketches, version=8;

DROP VIEW IF EXISTS mcpdrift.adapted_1h_mv;

DROP VIEW IF EXISTS mcpdrift.rejected_1h_mv;

DROP TABLE IF EXISTS mcpdrift.adapted_1h SYNC;

ALTER TABLE mcpdrift.rejected_1h DELETE WHERE outcome = 'removed'
SETTINGS mutations_sync = 2;

CREATE TABLE IF NOT EXISTS mcpdrift.adapted_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    adapter_id          LowCardinality(String),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    calls               SimpleAggregateFunction(sum, UInt64),
    normalized          SimpleAggregateFunction(sum, UInt64),
    calls_unknown_age   SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapted_1h_mv TO mcpdrift.adapted_1h AS
SELECT tenant, toStartOfHour(time) AS hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       count() AS calls,
       countIf(outcome = 'normalized') AS normalized,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.rejected_1h_mv TO mcpdrift.rejected_1h AS
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM mcpdrift.calls_1h
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

INSERT INTO mcpdrift.adapted_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       count() AS calls,
       countIf(outcome = 'normalized') AS normalized,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

INSERT INTO mcpdrift.rejected_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome = 'removed'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=b62cf43cd8db4922fb82fd9ebbd59885432c505aaaf0ea8373f3ed5795fcb9ca, name=unknown_callers, version=9;

ALTER TABLE mcpdrift.events_in
    ADD COLUMN IF NOT EXISTS retry_after Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7) AFTER retry_attempt;

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS retry_after Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7) AFTER retry_attempt;

ALTER TABLE mcpdrift.recent_calls
    ADD COLUMN IF NOT EXISTS retry_after Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7) AFTER retry;

DROP VIEW IF EXISTS mcpdrift.events_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.events_mv TO mcpdrift.events AS
SELECT * EXCEPT (args_raw, args_normalized)
FROM mcpdrift.events_in;

DROP VIEW IF EXISTS mcpdrift.recent_calls_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.recent_calls_mv TO mcpdrift.recent_calls AS
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry, retry_after,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call';

DROP VIEW IF EXISTS mcpdrift.retries_1h_mv;

DROP TABLE IF EXISTS mcpdrift.retries_1h SYNC;

CREATE TABLE IF NOT EXISTS mcpdrift.retries_1h
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    retry_after         Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    retries             SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, service, environment, client_name, client_version, retry_after)
TTL hour + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.retries_1h_mv TO mcpdrift.retries_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, service, environment, client_name, client_version, retry_after,
       count() AS retries
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND retry_of != ''
GROUP BY tenant, hour, tool, service, environment, client_name, client_version, retry_after;

INSERT INTO mcpdrift.retries_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, tool, service, environment, client_name, client_version, retry_after,
       count() AS retries
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND retry_of != ''
GROUP BY tenant, hour, tool, service, environment, client_name, client_version, retry_after;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=194695d80f3b53baf0431f3b788dd7f8921352486abc74cc5b1f12e979642f8f, name=retry_after, version=10;

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS revision_client_source Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3) AFTER revision_client;

ALTER TABLE mcpdrift.events_in
    ADD COLUMN IF NOT EXISTS revision_client_source Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3) AFTER revision_client;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=600e8eae8a50001fd6fe9463e697b07f47b1dd7c344b8466906f0472781878a9, name=revision_source, version=11;

ALTER TABLE mcpdrift.recent_calls
    ADD COLUMN IF NOT EXISTS revision_client_source Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3) AFTER revision_client;

ALTER TABLE mcpdrift.calls_1h
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;

ALTER TABLE mcpdrift.calls_1d
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;

ALTER TABLE mcpdrift.calls_1d_mv MODIFY QUERY
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       sum(calls_listed) AS calls_listed,
       sum(calls_inferred) AS calls_inferred,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

ALTER TABLE mcpdrift.calls_1h_mv MODIFY QUERY
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       countIf(revision_client_source = 'listed') AS calls_listed,
       countIf(revision_client_source = 'inferred') AS calls_inferred,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

ALTER TABLE mcpdrift.recent_calls_mv MODIFY QUERY
SELECT tenant, time, tool, revision_client, revision_client_source, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry, retry_after,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call';

RENAME TABLE IF EXISTS mcpdrift.calls_1d_mv TO mcpdrift.calls_1d_mv_renamed, mcpdrift.calls_1d_mv_renamed TO mcpdrift.calls_1d_mv;

RENAME TABLE IF EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h_mv_renamed, mcpdrift.calls_1h_mv_renamed TO mcpdrift.calls_1h_mv;

RENAME TABLE IF EXISTS mcpdrift.recent_calls_mv TO mcpdrift.recent_calls_mv_renamed, mcpdrift.recent_calls_mv_renamed TO mcpdrift.recent_calls_mv;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=b828e9c509aeb73336d42f1b49ce0cf13e21803696b86882a9603b420004f393, name=revision_sources, version=12;

ALTER TABLE mcpdrift.events
    MODIFY COLUMN event_name Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7);

ALTER TABLE mcpdrift.events_in
    MODIFY COLUMN event_name Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7);

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;

ALTER TABLE mcpdrift.events_in
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;

CREATE TABLE IF NOT EXISTS mcpdrift.tool_revisions
(
    tenant           LowCardinality(String),
    tool             LowCardinality(String),
    service          LowCardinality(String),
    environment      LowCardinality(String),
    revision         String,
    definition       AggregateFunction(argMax, String, DateTime64(9, 'UTC')),
    first_advertised SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_advertised  SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    instances        SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    advertisements   SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (tenant, tool, service, environment, revision);

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.tool_revisions_mv TO mcpdrift.tool_revisions AS
SELECT tenant, tool, service, environment, revision_server AS revision,
       argMaxState(definition, time) AS definition,
       min(time) AS first_advertised,
       max(time) AS last_advertised,
       groupUniqArrayIf(service_instance, service_instance != '') AS instances,
       count() AS advertisements
FROM mcpdrift.events_in
WHERE event_name = 'mcp.drift.advertised'
GROUP BY tenant, tool, service, environment, revision;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=459bdea4cebc9c6290efb4cd755c6e2b9a36f3fab922761744ee45bbdad096be, name=advertised, version=13;

DROP VIEW IF EXISTS mcpdrift.violations_side_effect_mv;

DROP VIEW IF EXISTS mcpdrift.violations_mixed_revision_mv;

DROP VIEW IF EXISTS mcpdrift.violations_removed_tool_mv;

DROP VIEW IF EXISTS mcpdrift.violations_retry_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, v.1 AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       v.2 AS detail
FROM
(
    SELECT tenant, time, event_id, event_name, tool, session_id, run_id, request_id,
           client_name, client_version, revision_client, revision_server, revision_validated,
           change_class, outcome, adapter_id, service, service_version, environment,
           error_code, external_target, external_requests, retry_of, retry_attempt, repair_result,
           event_name = 'mcp.drift.call'
             AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
             AND side_effect_started AS is_side_effect,
           event_name = 'mcp.drift.call'
             AND revision_validated != '' AND revision_validated != revision_server AS is_mixed,
           event_name = 'mcp.drift.call'
             AND outcome IN ('current', 'normalized')
             AND change_class = 'removal' AS is_removed,
           ((event_name = 'mcp.drift.call' AND retry_of != '')
             OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
             AND repair_automatic
             AND change_class IN ('semantic', 'authority') AS is_retry
    FROM mcpdrift.events
    WHERE is_side_effect OR is_mixed OR is_removed OR is_retry
)
ARRAY JOIN arrayFilter(x -> x.1 != '', [
    (if(is_side_effect, 'side_effect_rejected', ''),
     concat(toString(outcome),
            if(error_code != '', concat(' with ', error_code), ''),
            ' after its side effect had started',
            if(external_target != '', concat(' on ', external_target), ''),
            if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), ''))),
    (if(is_mixed, 'mixed_revision', ''),
     concat('validated under revision ', revision_validated, ', executed under revision ', revision_server)),
    (if(is_removed, 'removed_tool_success', ''),
     concat(toString(outcome), ' call to a removed revision (change class removal)')),
    (if(is_retry, 'retry_across_change', ''),
     if(event_name = 'mcp.drift.call',
        concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
               toString(change_class)),
        concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
               toString(change_class))))
]) AS v;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=e74a87ae463dd583bbbd03f04994343545dae10419b3d69d5b5028f881319868, name=violations_view, version=14;

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS args_raw String CODEC(ZSTD(3)) TTL toDateTime(time) + INTERVAL 30 DAY AFTER contract_field,
    ADD COLUMN IF NOT EXISTS args_normalized String CODEC(ZSTD(3)) TTL toDateTime(time) + INTERVAL 30 DAY AFTER args_raw,
    ADD COLUMN IF NOT EXISTS audited Bool AFTER args_normalized;

ALTER TABLE mcpdrift.events
    ADD INDEX IF NOT EXISTS idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4;

DROP VIEW IF EXISTS mcpdrift.audit_calls_mv;

DROP VIEW IF EXISTS mcpdrift.events_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.events_mv TO mcpdrift.events AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM mcpdrift.events_in;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=c7201651ead8abfa338af159c78eb7a099097040b421ee5d5ae68ab0941922e1, name=audit_in_events, version=15;

ALTER TABLE mcpdrift.events_in
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope String AFTER list_ttl_ms;

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope LowCardinality(String) AFTER list_ttl_ms;

ALTER TABLE mcpdrift.tool_revisions
    ADD COLUMN IF NOT EXISTS list_ttl_ms SimpleAggregateFunction(max, Int64) AFTER advertisements,
    ADD COLUMN IF NOT EXISTS list_cache_scope AggregateFunction(argMax, String, Tuple(Int64, String)) AFTER list_ttl_ms;

DROP VIEW IF EXISTS mcpdrift.events_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.events_mv TO mcpdrift.events AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM mcpdrift.events_in;

DROP VIEW IF EXISTS mcpdrift.tool_revisions_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.tool_revisions_mv TO mcpdrift.tool_revisions AS
SELECT tenant, tool, service, environment, revision_server AS revision,
       argMaxState(definition, time) AS definition,
       min(time) AS first_advertised,
       max(time) AS last_advertised,
       groupUniqArrayIf(service_instance, service_instance != '') AS instances,
       count() AS advertisements,
       max(e.list_ttl_ms) AS list_ttl_ms,
       argMaxState(CAST(e.list_cache_scope AS String), (e.list_ttl_ms, CAST(e.list_cache_scope AS String))) AS list_cache_scope
FROM mcpdrift.events_in AS e
WHERE event_name = 'mcp.drift.advertised'
GROUP BY tenant, tool, service, environment, revision;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=c248ad5f7854ae135d650aeca71517d5e585121ed47747ac789262a2993a70c5, name=list_cache, version=16;

ALTER TABLE mcpdrift.violation_candidates
    ADD COLUMN IF NOT EXISTS event_name LowCardinality(String) AFTER detail,
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER event_name,
    ADD COLUMN IF NOT EXISTS external_target LowCardinality(String) AFTER error_code,
    ADD COLUMN IF NOT EXISTS external_requests Int64 AFTER external_target,
    ADD COLUMN IF NOT EXISTS retry_of String CODEC(ZSTD(1)) AFTER external_requests,
    ADD COLUMN IF NOT EXISTS retry_attempt Int64 AFTER retry_of,
    ADD COLUMN IF NOT EXISTS repair_result LowCardinality(String) AFTER retry_attempt;

DROP VIEW IF EXISTS mcpdrift.violations_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.violations_mv TO mcpdrift.violation_candidates AS
SELECT tenant, time, event_id, kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       '' AS detail,
       toString(event_name) AS event_name, error_code, external_target, external_requests,
       retry_of, retry_attempt, toString(repair_result) AS repair_result
FROM
(
    SELECT tenant, time, event_id, event_name, tool, session_id, run_id, request_id,
           client_name, client_version, revision_client, revision_server, revision_validated,
           change_class, outcome, adapter_id, service, service_version, environment,
           error_code, external_target, external_requests, retry_of, retry_attempt, repair_result,
           event_name = 'mcp.drift.call'
             AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
             AND side_effect_started AS is_side_effect,
           event_name = 'mcp.drift.call'
             AND revision_validated != '' AND revision_validated != revision_server AS is_mixed,
           event_name = 'mcp.drift.call'
             AND outcome IN ('current', 'normalized')
             AND change_class = 'removal' AS is_removed,
           ((event_name = 'mcp.drift.call' AND retry_of != '')
             OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
             AND repair_automatic
             AND change_class IN ('semantic', 'authority') AS is_retry
    FROM mcpdrift.events
    WHERE is_side_effect OR is_mixed OR is_removed OR is_retry
)
ARRAY JOIN arrayFilter(x -> x != '', [
    if(is_side_effect, 'side_effect_rejected', ''),
    if(is_mixed, 'mixed_revision', ''),
    if(is_removed, 'removed_tool_success', ''),
    if(is_retry, 'retry_across_change', '')
]) AS kind;

DROP VIEW IF EXISTS mcpdrift.adapter_call_candidates_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapter_call_candidates_mv TO mcpdrift.adapter_call_candidates AS
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       '' AS detail
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class != 'removal'
  AND adapter_id != '';

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=c94b6e5c33da981397163a8ae72b808c3b441db7bb1af5c48b3fb28cf6a352b5, name=violation_facts, version=17;

ALTER TABLE mcpdrift.calls_1h
    ADD COLUMN IF NOT EXISTS calls_unknown_age SimpleAggregateFunction(sum, UInt64) AFTER calls_inferred;

DROP VIEW IF EXISTS mcpdrift.calls_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.calls_1h_mv TO mcpdrift.calls_1h AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       countIf(revision_client_source = 'listed') AS calls_listed,
       countIf(revision_client_source = 'inferred') AS calls_inferred,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

DROP VIEW IF EXISTS mcpdrift.adapted_1h_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.adapted_1h_mv TO mcpdrift.adapted_1h AS
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'normalized') AS normalized,
       sum(calls_unknown_age) AS calls_unknown_age,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=d79820cc14b0c0ce67618479f0dda060f2e288be05c816b6b94694e408e23ccb, name=adapted_cascade, version=18;

ALTER TABLE mcpdrift.events_in
    ADD COLUMN IF NOT EXISTS client_view Enum8('' = 0, 'held' = 1, 'alone' = 2) AFTER args_normalized;

ALTER TABLE mcpdrift.events
    ADD COLUMN IF NOT EXISTS client_view Enum8('' = 0, 'held' = 1, 'alone' = 2) AFTER args_normalized;

CREATE TABLE IF NOT EXISTS mcpdrift.client_views
ENGINE = MergeTree
PARTITION BY toDate(held_at)
ORDER BY (tenant, held_at)
TTL toDateTime(held_at) + INTERVAL 7 DAY
AS SELECT *, now64(3, 'UTC') AS held_at FROM mcpdrift.events_in WHERE 0;

CREATE TABLE IF NOT EXISTS mcpdrift.client_view_claims
(
    epoch       UInt64,
    owner       String,
    released_to DateTime64(3, 'UTC'),
    at          DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY epoch
TTL toDateTime(at) + INTERVAL 30 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.client_views_mv TO mcpdrift.client_views AS
SELECT *, now64(3, 'UTC') AS held_at
FROM mcpdrift.events_in
WHERE client_view = 'held';

DROP VIEW IF EXISTS mcpdrift.events_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS mcpdrift.events_mv TO mcpdrift.events AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM mcpdrift.events_in
WHERE client_view != 'held';

INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})
-- params: checksum=67eeeac434681356dc6bb5687bc98b586ce6aeb54dac8cd413eb68b6aa00787c, name=client_views, version=19;

INSERT INTO mcpdrift.schema_lock (seq, owner)
SETTINGS insert_deduplicate = 1, insert_deduplication_token = 'schema_lock_2'
VALUES ({seq:UInt64}, {owner:String})

-- params: owner=<owner>, seq=2;

ALTER TABLE mcpdrift.events MODIFY TTL toDateTime(time) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.recent_calls MODIFY TTL toDateTime(time) + INTERVAL 2 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.calls_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.calls_1d MODIFY TTL day + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.repairs_1m MODIFY TTL minute + INTERVAL 2 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.repairs_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.repairs_1d MODIFY TTL day + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.usage_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.usage_1d MODIFY TTL day + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.rejected_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.adapted_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.retries_1h MODIFY TTL hour + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.audit_calls MODIFY TTL toDateTime(time) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.violation_candidates MODIFY TTL toDateTime(time) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.propagation_events MODIFY TTL toDateTime(time) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.adapter_call_candidates MODIFY TTL toDateTime(time) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE mcpdrift.events MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.audit_calls MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.adapters MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.calls_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.calls_1d MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.repairs_1m MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.repairs_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.repairs_1d MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.usage_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.usage_1d MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.rejected_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.adapted_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.violation_candidates MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.propagation_events MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.adapter_call_candidates MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.recent_calls MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.retries_1h MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.tool_revisions MODIFY SETTING min_level_for_wide_part = 1;

ALTER TABLE mcpdrift.events MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.audit_calls MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.adapters MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.calls_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.calls_1d MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.repairs_1m MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.repairs_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.repairs_1d MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.usage_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.usage_1d MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.rejected_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.adapted_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.violation_candidates MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.propagation_events MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.adapter_call_candidates MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.recent_calls MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.retries_1h MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE mcpdrift.tool_revisions MODIFY SETTING non_replicated_deduplication_window = 1000;
