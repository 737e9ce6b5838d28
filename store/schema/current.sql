-- The schema a fresh store ends with, every migration applied, default
-- options, in its single-node form (tables' SETTINGS left out). Generated:
-- go test ./store/embedded -run TestCurrentSchema -update. Checked against a
-- fresh store on the embedded store, the ClickHouse server and the cluster.
-- Which view feeds which table, and the reports that read it: current.md.

CREATE TABLE mcpdrift.adapted_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `normalized` SimpleAggregateFunction(sum, UInt64),
    `calls_unknown_age` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.adapter_call_candidates
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `event_id` UInt64 CODEC(ZSTD(1)),
    `tool` LowCardinality(String),
    `session_id` String CODEC(ZSTD(1)),
    `run_id` String CODEC(ZSTD(1)),
    `request_id` String CODEC(ZSTD(1)),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String CODEC(ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, adapter_id, time, event_id)
TTL toDateTime(time) + toIntervalDay(30);

CREATE TABLE mcpdrift.adapters
(
    `tenant` LowCardinality(String),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `revision_from` LowCardinality(String),
    `revision_to` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `window_end` DateTime('UTC'),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `declared_at` DateTime64(9, 'UTC')
)
ENGINE = ReplacingMergeTree(declared_at)
ORDER BY (tenant, adapter_id);

CREATE TABLE mcpdrift.audit_calls
(
    `tenant` LowCardinality(String),
    `event_id` UInt64 CODEC(ZSTD(1)),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `tool` LowCardinality(String),
    `request_id` String CODEC(ZSTD(1)),
    `session_id` String CODEC(ZSTD(1)),
    `run_id` String CODEC(ZSTD(1)),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `external_target` LowCardinality(String),
    `external_requests` Int64 CODEC(T64, ZSTD(1)),
    `side_effect_started` Bool,
    `args_raw` String CODEC(ZSTD(3)),
    `args_normalized` String CODEC(ZSTD(3)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, tool, time)
TTL toDateTime(time) + toIntervalDay(30);

CREATE TABLE mcpdrift.calls_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `side_effects` SimpleAggregateFunction(sum, UInt64),
    `retries` SimpleAggregateFunction(sum, UInt64),
    `calls_listed` SimpleAggregateFunction(sum, UInt64),
    `calls_inferred` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, day, service, environment, client_name, client_version, privilege, error_code)
TTL day + toIntervalDay(30);

CREATE TABLE mcpdrift.calls_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `side_effects` SimpleAggregateFunction(sum, UInt64),
    `retries` SimpleAggregateFunction(sum, UInt64),
    `calls_listed` SimpleAggregateFunction(sum, UInt64),
    `calls_inferred` SimpleAggregateFunction(sum, UInt64),
    `calls_unknown_age` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour, service, environment, client_name, client_version, privilege, error_code)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.client_view_claims
(
    `epoch` UInt64,
    `owner` String,
    `released_to` DateTime64(3, 'UTC'),
    `at` DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY epoch
TTL toDateTime(at) + toIntervalDay(30);

CREATE TABLE mcpdrift.client_views
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
    `time` DateTime64(9, 'UTC'),
    `trace_id` FixedString(16),
    `span_id` FixedString(8),
    `service` String,
    `service_version` String,
    `service_instance` String,
    `service_namespace` String,
    `environment` String,
    `tool` String,
    `method` String,
    `request_id` String,
    `session_id` String,
    `protocol_version` String,
    `client_name` String,
    `client_version` String,
    `revision_client` String,
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` String,
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `idempotency_key` String,
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `repair_duration_ms` Int64,
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    `notification_lag_ms` Int64,
    `adapter_revision_from` String,
    `adapter_revision_to` String,
    `adapter_window_end` DateTime('UTC'),
    `contract_field` String,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` String,
    `args_raw` String,
    `args_normalized` String,
    `client_view` Enum8('' = 0, 'held' = 1, 'alone' = 2),
    `attributes` Map(String, String),
    `held_at` DateTime64(3, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toDate(held_at)
ORDER BY (tenant, held_at)
TTL toDateTime(held_at) + toIntervalDay(7);

CREATE TABLE mcpdrift.events
(
    `tenant` LowCardinality(String),
    `event_id` UInt64 CODEC(ZSTD(1)),
    `event_name` Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `trace_id` FixedString(16) CODEC(ZSTD(1)),
    `span_id` FixedString(8) CODEC(ZSTD(1)),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `service_instance` LowCardinality(String),
    `service_namespace` LowCardinality(String),
    `environment` LowCardinality(String),
    `tool` LowCardinality(String),
    `method` LowCardinality(String),
    `request_id` String CODEC(ZSTD(1)),
    `session_id` String CODEC(ZSTD(1)),
    `protocol_version` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `revision_before` LowCardinality(String),
    `revision_after` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `side_effect_started` Bool,
    `external_requests` Int64 CODEC(T64, ZSTD(1)),
    `external_target` LowCardinality(String),
    `error_code` LowCardinality(String),
    `required_action` LowCardinality(String),
    `retry_of` String CODEC(ZSTD(1)),
    `retry_attempt` Int64 CODEC(T64, ZSTD(1)),
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `idempotency_key` String CODEC(ZSTD(1)),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `repair_duration_ms` Int64 CODEC(T64, ZSTD(1)),
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `run_id` String CODEC(ZSTD(1)),
    `session_age_s` Int64 CODEC(T64, ZSTD(1)),
    `refresh_result` Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    `notification_lag_ms` Int64 CODEC(T64, ZSTD(1)),
    `adapter_revision_from` LowCardinality(String),
    `adapter_revision_to` LowCardinality(String),
    `adapter_window_end` DateTime('UTC'),
    `contract_field` LowCardinality(String),
    `args_raw` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay(30),
    `args_normalized` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay(30),
    `client_view` Enum8('' = 0, 'held' = 1, 'alone' = 2),
    `audited` Bool,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` LowCardinality(String),
    `attributes` Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, event_name, tool, revision_client, revision_server, time)
TTL toDateTime(time) + toIntervalDay(30);

CREATE TABLE mcpdrift.events_in
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
    `time` DateTime64(9, 'UTC'),
    `trace_id` FixedString(16),
    `span_id` FixedString(8),
    `service` String,
    `service_version` String,
    `service_instance` String,
    `service_namespace` String,
    `environment` String,
    `tool` String,
    `method` String,
    `request_id` String,
    `session_id` String,
    `protocol_version` String,
    `client_name` String,
    `client_version` String,
    `revision_client` String,
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` String,
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `idempotency_key` String,
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `repair_duration_ms` Int64,
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    `notification_lag_ms` Int64,
    `adapter_revision_from` String,
    `adapter_revision_to` String,
    `adapter_window_end` DateTime('UTC'),
    `contract_field` String,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` String,
    `args_raw` String,
    `args_normalized` String,
    `client_view` Enum8('' = 0, 'held' = 1, 'alone' = 2),
    `attributes` Map(String, String)
)
ENGINE = `Null`;

CREATE TABLE mcpdrift.propagation_events
(
    `tenant` LowCardinality(String),
    `kind` Enum8('notice' = 1, 'refresh' = 2, 'refresh_failed' = 3, 'stale_call' = 4),
    `session` String CODEC(ZSTD(1)),
    `tool` LowCardinality(String),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `lag_ms` Int64 CODEC(T64, ZSTD(1)),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, kind, time)
TTL toDateTime(time) + toIntervalDay(30);

CREATE TABLE mcpdrift.recent_calls
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `side_effect_started` Bool,
    `retry` Bool,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `session` String CODEC(ZSTD(1)),
    `run_id` String CODEC(ZSTD(1)),
    `session_age_s` Int64 CODEC(T64, ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toDate(time)
ORDER BY (tenant, time)
TTL toDateTime(time) + toIntervalDay(2);

CREATE TABLE mcpdrift.rejected_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `error_code` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `side_effects` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code, service, environment, client_name, client_version)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.repairs_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, day, service, environment, client_name, client_version)
TTL day + toIntervalDay(30);

CREATE TABLE mcpdrift.repairs_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, hour, service, environment, client_name, client_version)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.repairs_1m
(
    `tenant` LowCardinality(String),
    `minute` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, minute, service, environment, client_name, client_version)
TTL minute + toIntervalDay(2);

CREATE TABLE mcpdrift.retries_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `retries` SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, service, environment, client_name, client_version, retry_after)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.schema_lock
(
    `seq` UInt64,
    `owner` String,
    `at` DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY seq;

CREATE TABLE mcpdrift.schema_migrations
(
    `version` UInt32,
    `name` String,
    `checksum` String,
    `applied_at` DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version;

CREATE TABLE mcpdrift.tool_revisions
(
    `tenant` LowCardinality(String),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `revision` String,
    `definition` AggregateFunction(argMax, String, DateTime64(9, 'UTC')),
    `first_advertised` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_advertised` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `instances` SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    `advertisements` SimpleAggregateFunction(sum, UInt64),
    `list_ttl_ms` SimpleAggregateFunction(max, Int64),
    `list_cache_scope` AggregateFunction(argMax, String, Tuple(
        Int64,
        String))
)
ENGINE = AggregatingMergeTree
ORDER BY (tenant, tool, service, environment, revision);

CREATE TABLE mcpdrift.usage_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `calls_current` SimpleAggregateFunction(sum, UInt64),
    `calls_normalized` SimpleAggregateFunction(sum, UInt64),
    `calls_rejected` SimpleAggregateFunction(sum, UInt64),
    `calls_rejected_stale` SimpleAggregateFunction(sum, UInt64),
    `calls_removed` SimpleAggregateFunction(sum, UInt64),
    `calls_failed` SimpleAggregateFunction(sum, UInt64),
    `retries` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `clients` AggregateFunction(uniqExact, String, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + toIntervalDay(30);

CREATE TABLE mcpdrift.usage_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `calls` SimpleAggregateFunction(sum, UInt64),
    `calls_current` SimpleAggregateFunction(sum, UInt64),
    `calls_normalized` SimpleAggregateFunction(sum, UInt64),
    `calls_rejected` SimpleAggregateFunction(sum, UInt64),
    `calls_rejected_stale` SimpleAggregateFunction(sum, UInt64),
    `calls_removed` SimpleAggregateFunction(sum, UInt64),
    `calls_failed` SimpleAggregateFunction(sum, UInt64),
    `retries` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `clients` AggregateFunction(uniqExact, String, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, service, environment)
TTL hour + toIntervalDay(30);

CREATE TABLE mcpdrift.violation_candidates
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `event_id` UInt64 CODEC(ZSTD(1)),
    `kind` LowCardinality(String),
    `tool` LowCardinality(String),
    `session_id` String CODEC(ZSTD(1)),
    `run_id` String CODEC(ZSTD(1)),
    `request_id` String CODEC(ZSTD(1)),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String CODEC(ZSTD(1)),
    `event_name` LowCardinality(String),
    `error_code` LowCardinality(String),
    `external_target` LowCardinality(String),
    `external_requests` Int64,
    `retry_of` String CODEC(ZSTD(1)),
    `retry_attempt` Int64,
    `repair_result` LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, time, event_id, kind)
TTL toDateTime(time) + toIntervalDay(30);

CREATE MATERIALIZED VIEW mcpdrift.adapted_1h_mv TO mcpdrift.adapted_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `calls` UInt64,
    `normalized` UInt64,
    `calls_unknown_age` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
AS SELECT
    tenant,
    hour,
    adapter_id,
    tool,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    sum(c.calls) AS calls,
    sumIf(c.calls, outcome = 'normalized') AS normalized,
    sum(calls_unknown_age) AS calls_unknown_age,
    uniqHLL12MergeState(sessions) AS sessions,
    min(first_seen) AS first_seen,
    max(last_seen) AS last_seen,
    max(max_session_age_s) AS max_session_age_s
FROM mcpdrift.calls_1h AS c
WHERE adapter_id != ''
GROUP BY
    tenant,
    hour,
    adapter_id,
    tool,
    service,
    environment,
    client_name,
    client_version,
    privilege;

CREATE MATERIALIZED VIEW mcpdrift.adapter_call_candidates_mv TO mcpdrift.adapter_call_candidates
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC'),
    `event_id` UInt64,
    `tool` LowCardinality(String),
    `session_id` String,
    `run_id` String,
    `request_id` String,
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String
)
AS SELECT
    tenant,
    time,
    event_id,
    tool,
    session_id,
    run_id,
    request_id,
    client_name,
    client_version,
    revision_client,
    revision_server,
    revision_validated,
    change_class,
    outcome,
    adapter_id,
    service,
    service_version,
    environment,
    '' AS detail
FROM mcpdrift.events
WHERE (event_name = 'mcp.drift.call') AND (outcome IN ('current', 'normalized')) AND (change_class != 'removal') AND (adapter_id != '');

CREATE MATERIALIZED VIEW mcpdrift.adapters_mv TO mcpdrift.adapters
(
    `tenant` LowCardinality(String),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `revision_from` LowCardinality(String),
    `revision_to` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `window_end` DateTime('UTC'),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `declared_at` DateTime64(9, 'UTC')
)
AS SELECT
    tenant,
    adapter_id,
    tool,
    adapter_revision_from AS revision_from,
    adapter_revision_to AS revision_to,
    change_class,
    adapter_window_end AS window_end,
    service,
    environment,
    time AS declared_at
FROM mcpdrift.events_in
WHERE event_name = 'mcp.drift.adapter';

CREATE MATERIALIZED VIEW mcpdrift.calls_1d_mv TO mcpdrift.calls_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `calls` UInt64,
    `side_effects` UInt64,
    `retries` UInt64,
    `calls_listed` UInt64,
    `calls_inferred` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
AS SELECT
    tenant,
    toStartOfDay(hour) AS day,
    tool,
    revision_client,
    revision_server,
    outcome,
    adapter_id,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    error_code,
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
GROUP BY
    tenant,
    day,
    tool,
    revision_client,
    revision_server,
    outcome,
    adapter_id,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    error_code;

CREATE MATERIALIZED VIEW mcpdrift.calls_1h_mv TO mcpdrift.calls_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `calls` UInt64,
    `side_effects` UInt64,
    `retries` UInt64,
    `calls_listed` UInt64,
    `calls_inferred` UInt64,
    `calls_unknown_age` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `first_seen` DateTime64(9, 'UTC'),
    `last_seen` DateTime64(9, 'UTC'),
    `max_session_age_s` Int64
)
AS SELECT
    tenant,
    toStartOfHour(time) AS hour,
    tool,
    revision_client,
    revision_server,
    outcome,
    adapter_id,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    error_code,
    count() AS calls,
    countIf(side_effect_started) AS side_effects,
    countIf(retry_of != '') AS retries,
    countIf(revision_client_source = 'listed') AS calls_listed,
    countIf(revision_client_source = 'inferred') AS calls_inferred,
    countIf(session_age_s <= 0) AS calls_unknown_age,
    uniqHLL12StateIf(if(session_id != '', session_id, run_id), (session_id != '') OR (run_id != '')) AS sessions,
    uniqHLL12StateIf(run_id, run_id != '') AS runs,
    min(time) AS first_seen,
    max(time) AS last_seen,
    max(session_age_s) AS max_session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call'
GROUP BY
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    outcome,
    adapter_id,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    error_code;

CREATE MATERIALIZED VIEW mcpdrift.client_views_mv TO mcpdrift.client_views
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
    `time` DateTime64(9, 'UTC'),
    `trace_id` FixedString(16),
    `span_id` FixedString(8),
    `service` String,
    `service_version` String,
    `service_instance` String,
    `service_namespace` String,
    `environment` String,
    `tool` String,
    `method` String,
    `request_id` String,
    `session_id` String,
    `protocol_version` String,
    `client_name` String,
    `client_version` String,
    `revision_client` String,
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` String,
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `idempotency_key` String,
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `repair_duration_ms` Int64,
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    `notification_lag_ms` Int64,
    `adapter_revision_from` String,
    `adapter_revision_to` String,
    `adapter_window_end` DateTime('UTC'),
    `contract_field` String,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` String,
    `args_raw` String,
    `args_normalized` String,
    `client_view` Enum8('' = 0, 'held' = 1, 'alone' = 2),
    `attributes` Map(String, String),
    `held_at` DateTime64(3, 'UTC')
)
AS SELECT
    *,
    now64(3, 'UTC') AS held_at
FROM mcpdrift.events_in
WHERE client_view = 'held';

CREATE MATERIALIZED VIEW mcpdrift.events_mv TO mcpdrift.events
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` Enum8('' = 0, 'mcp.drift.call' = 1, 'mcp.drift.list_changed' = 2, 'mcp.drift.refresh' = 3, 'mcp.drift.repair' = 4, 'mcp.drift.contract_error' = 5, 'mcp.drift.adapter' = 6, 'mcp.drift.advertised' = 7),
    `time` DateTime64(9, 'UTC'),
    `trace_id` FixedString(16),
    `span_id` FixedString(8),
    `service` String,
    `service_version` String,
    `service_instance` String,
    `service_namespace` String,
    `environment` String,
    `tool` String,
    `method` String,
    `request_id` String,
    `session_id` String,
    `protocol_version` String,
    `client_name` String,
    `client_version` String,
    `revision_client` String,
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` String,
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `idempotency_key` String,
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `repair_duration_ms` Int64,
    `approval` Enum8('' = 0, 'none' = 1, 'session' = 2, 'per_call' = 3, 'denied' = 4),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` Enum8('' = 0, 'ok' = 1, 'failed' = 2),
    `notification_lag_ms` Int64,
    `adapter_revision_from` String,
    `adapter_revision_to` String,
    `adapter_window_end` DateTime('UTC'),
    `contract_field` String,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` String,
    `args_raw` String,
    `args_normalized` String,
    `client_view` Enum8('' = 0, 'held' = 1, 'alone' = 2),
    `attributes` Map(String, String),
    `audited` UInt8
)
AS SELECT
    *,
    event_name = 'mcp.drift.call' AS audited
FROM mcpdrift.events_in
WHERE client_view != 'held';

CREATE MATERIALIZED VIEW mcpdrift.propagation_events_mv TO mcpdrift.propagation_events
(
    `tenant` LowCardinality(String),
    `kind` String,
    `session` String,
    `tool` LowCardinality(String),
    `time` DateTime64(9, 'UTC'),
    `lag_ms` Int64,
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String)
)
AS SELECT
    tenant,
    multiIf(event_name = 'mcp.drift.list_changed', 'notice', event_name = 'mcp.drift.call', 'stale_call', refresh_result != 'failed', 'refresh', 'refresh_failed') AS kind,
    if(session_id != '', session_id, run_id) AS session,
    tool,
    time,
    if(event_name = 'mcp.drift.list_changed', notification_lag_ms, 0) AS lag_ms,
    service,
    environment,
    client_name,
    client_version
FROM mcpdrift.events
WHERE ((session_id != '') OR (run_id != '')) AND ((event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')) OR ((event_name = 'mcp.drift.call') AND (revision_client != '') AND (revision_client != revision_server)));

CREATE MATERIALIZED VIEW mcpdrift.recent_calls_mv TO mcpdrift.recent_calls
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_client_source` Enum8('' = 0, 'declared' = 1, 'listed' = 2, 'inferred' = 3),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` Enum8('' = 0, 'read' = 1, 'write' = 2, 'destructive' = 3, 'credentialed' = 4),
    `error_code` LowCardinality(String),
    `side_effect_started` Bool,
    `retry` UInt8,
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `session` String,
    `run_id` String,
    `session_age_s` Int64
)
AS SELECT
    tenant,
    time,
    tool,
    revision_client,
    revision_client_source,
    revision_server,
    outcome,
    adapter_id,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    error_code,
    side_effect_started,
    retry_of != '' AS retry,
    retry_after,
    if(session_id != '', session_id, run_id) AS session,
    run_id,
    session_age_s
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.call';

CREATE MATERIALIZED VIEW mcpdrift.rejected_1h_mv TO mcpdrift.rejected_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `error_code` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `calls` UInt64,
    `side_effects` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
AS SELECT
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    outcome,
    error_code,
    service,
    environment,
    client_name,
    client_version,
    sum(calls) AS calls,
    sum(side_effects) AS side_effects,
    uniqHLL12MergeState(sessions) AS sessions,
    min(first_seen) AS first_seen,
    max(last_seen) AS last_seen
FROM mcpdrift.calls_1h
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')
GROUP BY
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    outcome,
    error_code,
    service,
    environment,
    client_name,
    client_version;

CREATE MATERIALIZED VIEW mcpdrift.repairs_1d_mv TO mcpdrift.repairs_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` UInt64,
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
AS SELECT
    tenant,
    toStartOfDay(hour) AS day,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version,
    sum(repairs) AS repairs,
    quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
    min(first_seen) AS first_seen,
    max(last_seen) AS last_seen
FROM mcpdrift.repairs_1h
GROUP BY
    tenant,
    day,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version;

CREATE MATERIALIZED VIEW mcpdrift.repairs_1h_mv TO mcpdrift.repairs_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` UInt64,
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
AS SELECT
    tenant,
    toStartOfHour(minute) AS hour,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version,
    sum(repairs) AS repairs,
    quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
    min(first_seen) AS first_seen,
    max(last_seen) AS last_seen
FROM mcpdrift.repairs_1m
GROUP BY
    tenant,
    hour,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version;

CREATE MATERIALIZED VIEW mcpdrift.repairs_1m_mv TO mcpdrift.repairs_1m
(
    `tenant` LowCardinality(String),
    `minute` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `repair_action` Enum8('' = 0, 'refresh_retry' = 1, 'model_repair' = 2, 'human_approval' = 3, 'abandon' = 4),
    `repair_automatic` Bool,
    `repair_result` Enum8('' = 0, 'success' = 1, 'failure' = 2),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` UInt64,
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` DateTime64(9, 'UTC'),
    `last_seen` DateTime64(9, 'UTC')
)
AS SELECT
    tenant,
    toStartOfMinute(time) AS minute,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version,
    count() AS repairs,
    quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
    min(time) AS first_seen,
    max(time) AS last_seen
FROM mcpdrift.events
WHERE event_name = 'mcp.drift.repair'
GROUP BY
    tenant,
    minute,
    tool,
    revision_client,
    change_class,
    repair_action,
    repair_automatic,
    repair_result,
    service,
    environment,
    client_name,
    client_version;

CREATE MATERIALIZED VIEW mcpdrift.retries_1h_mv TO mcpdrift.retries_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `retry_after` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `retries` UInt64
)
AS SELECT
    tenant,
    toStartOfHour(time) AS hour,
    tool,
    service,
    environment,
    client_name,
    client_version,
    retry_after,
    count() AS retries
FROM mcpdrift.events
WHERE (event_name = 'mcp.drift.call') AND (retry_of != '')
GROUP BY
    tenant,
    hour,
    tool,
    service,
    environment,
    client_name,
    client_version,
    retry_after;

CREATE MATERIALIZED VIEW mcpdrift.tool_revisions_mv TO mcpdrift.tool_revisions
(
    `tenant` String,
    `tool` String,
    `service` String,
    `environment` String,
    `revision` String,
    `definition` AggregateFunction(argMax, String, DateTime64(9, 'UTC')),
    `first_advertised` DateTime64(9, 'UTC'),
    `last_advertised` DateTime64(9, 'UTC'),
    `instances` Array(String),
    `advertisements` UInt64,
    `list_ttl_ms` Int64,
    `list_cache_scope` AggregateFunction(argMax, String, Tuple(
        Int64,
        String))
)
AS SELECT
    tenant,
    tool,
    service,
    environment,
    revision_server AS revision,
    argMaxState(definition, time) AS definition,
    min(time) AS first_advertised,
    max(time) AS last_advertised,
    groupUniqArrayIf(service_instance, service_instance != '') AS instances,
    count() AS advertisements,
    max(e.list_ttl_ms) AS list_ttl_ms,
    argMaxState(CAST(e.list_cache_scope, 'String'), (e.list_ttl_ms, CAST(e.list_cache_scope, 'String'))) AS list_cache_scope
FROM mcpdrift.events_in AS e
WHERE event_name = 'mcp.drift.advertised'
GROUP BY
    tenant,
    tool,
    service,
    environment,
    revision;

CREATE MATERIALIZED VIEW mcpdrift.usage_1d_mv TO mcpdrift.usage_1d
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `calls` UInt64,
    `calls_current` UInt64,
    `calls_normalized` UInt64,
    `calls_rejected` UInt64,
    `calls_rejected_stale` UInt64,
    `calls_removed` UInt64,
    `calls_failed` UInt64,
    `retries` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `clients` AggregateFunction(uniqExact, String, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
AS SELECT
    tenant,
    toStartOfDay(hour) AS day,
    tool,
    revision_client,
    revision_server,
    service,
    environment,
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
GROUP BY
    tenant,
    day,
    tool,
    revision_client,
    revision_server,
    service,
    environment;

CREATE MATERIALIZED VIEW mcpdrift.usage_1h_mv TO mcpdrift.usage_1h
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `calls` UInt64,
    `calls_current` UInt64,
    `calls_normalized` UInt64,
    `calls_rejected` UInt64,
    `calls_rejected_stale` UInt64,
    `calls_removed` UInt64,
    `calls_failed` UInt64,
    `retries` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `runs` AggregateFunction(uniqHLL12, String),
    `clients` AggregateFunction(uniqExact, String, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
AS SELECT
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    service,
    environment,
    sum(c.calls) AS calls,
    sumIf(c.calls, outcome = 'current') AS calls_current,
    sumIf(c.calls, outcome = 'normalized') AS calls_normalized,
    sumIf(c.calls, (outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid'))) AS calls_rejected,
    sumIf(c.calls, outcome = 'rejected_stale') AS calls_rejected_stale,
    sumIf(c.calls, outcome = 'removed') AS calls_removed,
    sumIf(c.calls, outcome = 'failed') AS calls_failed,
    sum(retries) AS retries,
    uniqHLL12MergeState(sessions) AS sessions,
    uniqHLL12MergeState(runs) AS runs,
    uniqExactStateIf(client_name, client_version, (client_name != '') OR (client_version != '')) AS clients,
    min(first_seen) AS first_seen,
    max(last_seen) AS last_seen
FROM mcpdrift.calls_1h AS c
GROUP BY
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    service,
    environment;

CREATE MATERIALIZED VIEW mcpdrift.violations_mv TO mcpdrift.violation_candidates
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC'),
    `event_id` UInt64,
    `kind` String,
    `tool` LowCardinality(String),
    `session_id` String,
    `run_id` String,
    `request_id` String,
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `change_class` Enum8('' = 0, 'additive' = 1, 'bounded_migration' = 2, 'semantic' = 3, 'authority' = 4, 'removal' = 5),
    `outcome` Enum8('' = 0, 'current' = 1, 'normalized' = 2, 'rejected_stale' = 3, 'rejected_incompatible' = 4, 'rejected_invalid' = 5, 'removed' = 6, 'failed' = 7),
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String,
    `event_name` String,
    `error_code` LowCardinality(String),
    `external_target` LowCardinality(String),
    `external_requests` Int64,
    `retry_of` String,
    `retry_attempt` Int64,
    `repair_result` String
)
AS SELECT
    tenant,
    time,
    event_id,
    kind,
    tool,
    session_id,
    run_id,
    request_id,
    client_name,
    client_version,
    revision_client,
    revision_server,
    revision_validated,
    change_class,
    outcome,
    adapter_id,
    service,
    service_version,
    environment,
    '' AS detail,
    toString(event_name) AS event_name,
    error_code,
    external_target,
    external_requests,
    retry_of,
    retry_attempt,
    toString(repair_result) AS repair_result
FROM
(
    SELECT
        tenant,
        time,
        event_id,
        event_name,
        tool,
        session_id,
        run_id,
        request_id,
        client_name,
        client_version,
        revision_client,
        revision_server,
        revision_validated,
        change_class,
        outcome,
        adapter_id,
        service,
        service_version,
        environment,
        error_code,
        external_target,
        external_requests,
        retry_of,
        retry_attempt,
        repair_result,
        (event_name = 'mcp.drift.call') AND (outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AND side_effect_started AS is_side_effect,
        (event_name = 'mcp.drift.call') AND (revision_validated != '') AND (revision_validated != revision_server) AS is_mixed,
        (event_name = 'mcp.drift.call') AND (outcome IN ('current', 'normalized')) AND (change_class = 'removal') AS is_removed,
        (((event_name = 'mcp.drift.call') AND (retry_of != '')) OR ((event_name = 'mcp.drift.repair') AND (repair_action = 'refresh_retry'))) AND repair_automatic AND (change_class IN ('semantic', 'authority')) AS is_retry
    FROM mcpdrift.events
    WHERE is_side_effect OR is_mixed OR is_removed OR is_retry
)
ARRAY JOIN arrayFilter(x -> (x != ''), [if(is_side_effect, 'side_effect_rejected', ''), if(is_mixed, 'mixed_revision', ''), if(is_removed, 'removed_tool_success', ''), if(is_retry, 'retry_across_change', '')]) AS kind;
