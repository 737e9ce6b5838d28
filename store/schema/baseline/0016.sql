-- The schema as migrations 1 to 16 leave a fresh store, for a store with
-- none of them applied (baseline.go). Cut from the migrations, not edited:
-- go test ./store/embedded -run TestBaselineCut -update

CREATE TABLE IF NOT EXISTS {{table "adapted_1h"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
    `calls` SimpleAggregateFunction(sum, UInt64),
    `normalized` SimpleAggregateFunction(sum, UInt64),
    `calls_unknown_age` SimpleAggregateFunction(sum, UInt64),
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    `max_session_age_s` SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "adapted_1h"}}

CREATE TABLE IF NOT EXISTS {{table "adapter_call_candidates"}}{{.OnCluster}}
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
    `change_class` {{.ChangeClassEnum}},
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String CODEC(ZSTD(1))
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, adapter_id, time, event_id)
TTL toDateTime(time) + toIntervalDay({{.RetentionDays}});
{{distributed "adapter_call_candidates"}}

CREATE TABLE IF NOT EXISTS {{table "adapters"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `revision_from` LowCardinality(String),
    `revision_to` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `window_end` DateTime('UTC'),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `declared_at` DateTime64(9, 'UTC')
)
ENGINE = {{engine "ReplacingMergeTree" "declared_at"}}
ORDER BY (tenant, adapter_id);
{{distributed "adapters"}}

CREATE TABLE IF NOT EXISTS {{table "audit_calls"}}{{.OnCluster}}
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
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `approval` {{.ApprovalEnum}},
    `privilege` {{.PrivilegeEnum}},
    `external_target` LowCardinality(String),
    `external_requests` Int64 CODEC(T64, ZSTD(1)),
    `side_effect_started` Bool,
    `args_raw` String CODEC(ZSTD(3)),
    `args_normalized` String CODEC(ZSTD(3)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, tool, time)
TTL toDateTime(time) + toIntervalDay({{.AuditRetentionDays}});
{{distributed "audit_calls"}}

CREATE TABLE IF NOT EXISTS {{table "calls_1d"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
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
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, day, service, environment, client_name, client_version, privilege, error_code)
TTL day + toIntervalDay({{.RetentionDays}});
{{distributed "calls_1d"}}

CREATE TABLE IF NOT EXISTS {{table "calls_1h"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
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
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour, service, environment, client_name, client_version, privilege, error_code)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "calls_1h"}}

CREATE TABLE IF NOT EXISTS {{table "events"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `event_id` UInt64 CODEC(ZSTD(1)),
    `event_name` {{.EventNameEnum}},
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
    `revision_client_source` {{.RevisionSourceEnum}},
    `revision_server` LowCardinality(String),
    `revision_validated` LowCardinality(String),
    `revision_before` LowCardinality(String),
    `revision_after` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `side_effect_started` Bool,
    `external_requests` Int64 CODEC(T64, ZSTD(1)),
    `external_target` LowCardinality(String),
    `error_code` LowCardinality(String),
    `required_action` LowCardinality(String),
    `retry_of` String CODEC(ZSTD(1)),
    `retry_attempt` Int64 CODEC(T64, ZSTD(1)),
    `retry_after` {{.OutcomeEnum}},
    `idempotency_key` String CODEC(ZSTD(1)),
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `repair_duration_ms` Int64 CODEC(T64, ZSTD(1)),
    `approval` {{.ApprovalEnum}},
    `privilege` {{.PrivilegeEnum}},
    `run_id` String CODEC(ZSTD(1)),
    `session_age_s` Int64 CODEC(T64, ZSTD(1)),
    `refresh_result` {{.RefreshResultEnum}},
    `notification_lag_ms` Int64 CODEC(T64, ZSTD(1)),
    `adapter_revision_from` LowCardinality(String),
    `adapter_revision_to` LowCardinality(String),
    `adapter_window_end` DateTime('UTC'),
    `contract_field` LowCardinality(String),
    `args_raw` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay({{.AuditRetentionDays}}),
    `args_normalized` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay({{.AuditRetentionDays}}),
    `audited` Bool,
    `definition` String,
    `list_ttl_ms` Int64,
    `list_cache_scope` LowCardinality(String),
    `attributes` Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_run run_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, event_name, tool, revision_client, revision_server, time)
TTL toDateTime(time) + toIntervalDay({{.RetentionDays}});
{{distributed "events"}}

CREATE TABLE IF NOT EXISTS {{table "events_in"}}{{.OnCluster}}
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` {{.EventNameEnum}},
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
    `revision_client_source` {{.RevisionSourceEnum}},
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` {{.OutcomeEnum}},
    `adapter_id` String,
    `change_class` {{.ChangeClassEnum}},
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` {{.OutcomeEnum}},
    `idempotency_key` String,
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `repair_duration_ms` Int64,
    `approval` {{.ApprovalEnum}},
    `privilege` {{.PrivilegeEnum}},
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` {{.RefreshResultEnum}},
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
    `attributes` Map(String, String)
)
ENGINE = Null;
{{distributed "events_in"}}

CREATE TABLE IF NOT EXISTS {{table "propagation_events"}}{{.OnCluster}}
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
ENGINE = {{engine "MergeTree"}}
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, kind, time)
TTL toDateTime(time) + toIntervalDay({{.RetentionDays}});
{{distributed "propagation_events"}}

CREATE TABLE IF NOT EXISTS {{table "recent_calls"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_client_source` {{.RevisionSourceEnum}},
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
    `error_code` LowCardinality(String),
    `side_effect_started` Bool,
    `retry` Bool,
    `retry_after` {{.OutcomeEnum}},
    `session` String CODEC(ZSTD(1)),
    `run_id` String CODEC(ZSTD(1)),
    `session_age_s` Int64 CODEC(T64, ZSTD(1))
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, time)
TTL toDateTime(time) + toIntervalDay(2);
{{distributed "recent_calls"}}

CREATE TABLE IF NOT EXISTS {{table "rejected_1h"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
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
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code, service, environment, client_name, client_version)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "rejected_1h"}}

CREATE TABLE IF NOT EXISTS {{table "repairs_1d"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, day, service, environment, client_name, client_version)
TTL day + toIntervalDay({{.RetentionDays}});
{{distributed "repairs_1d"}}

CREATE TABLE IF NOT EXISTS {{table "repairs_1h"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, hour, service, environment, client_name, client_version)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "repairs_1h"}}

CREATE TABLE IF NOT EXISTS {{table "repairs_1m"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `minute` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `repairs` SimpleAggregateFunction(sum, UInt64),
    `duration_ms` AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    `first_seen` SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    `last_seen` SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result, minute, service, environment, client_name, client_version)
TTL minute + toIntervalDay(2);
{{distributed "repairs_1m"}}

CREATE TABLE IF NOT EXISTS {{table "retries_1h"}}{{.OnCluster}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `retry_after` {{.OutcomeEnum}},
    `retries` SimpleAggregateFunction(sum, UInt64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, service, environment, client_name, client_version, retry_after)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "retries_1h"}}

CREATE TABLE IF NOT EXISTS {{table "tool_revisions"}}{{.OnCluster}}
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
ENGINE = {{engine "AggregatingMergeTree"}}
ORDER BY (tenant, tool, service, environment, revision);
{{distributed "tool_revisions"}}

CREATE TABLE IF NOT EXISTS {{table "usage_1d"}}{{.OnCluster}}
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
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + toIntervalDay({{.RetentionDays}});
{{distributed "usage_1d"}}

CREATE TABLE IF NOT EXISTS {{table "usage_1h"}}{{.OnCluster}}
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
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, service, environment)
TTL hour + toIntervalDay({{.RetentionDays}});
{{distributed "usage_1h"}}

CREATE TABLE IF NOT EXISTS {{table "violation_candidates"}}{{.OnCluster}}
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
    `change_class` {{.ChangeClassEnum}},
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `service_version` LowCardinality(String),
    `environment` LowCardinality(String),
    `detail` String CODEC(ZSTD(1))
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, time, event_id, kind)
TTL toDateTime(time) + toIntervalDay({{.RetentionDays}});
{{distributed "violation_candidates"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}} TO {{table "adapted_1h"}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
    `calls` UInt64,
    `normalized` UInt64,
    `calls_unknown_age` UInt64,
    `sessions` AggregateFunction(uniqHLL12, String),
    `first_seen` DateTime64(9, 'UTC'),
    `last_seen` DateTime64(9, 'UTC'),
    `max_session_age_s` Int64
)
AS SELECT
    tenant,
    toStartOfHour(time) AS hour,
    adapter_id,
    tool,
    service,
    environment,
    client_name,
    client_version,
    privilege,
    count() AS calls,
    countIf(outcome = 'normalized') AS normalized,
    countIf(session_age_s <= 0) AS calls_unknown_age,
    uniqHLL12StateIf(if(session_id != '', session_id, run_id), (session_id != '') OR (run_id != '')) AS sessions,
    min(time) AS first_seen,
    max(time) AS last_seen,
    max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE (event_name = 'mcp.drift.call') AND (adapter_id != '')
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapter_call_candidates_mv{{.OnCluster}} TO {{table "adapter_call_candidates"}}
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
    `change_class` {{.ChangeClassEnum}},
    `outcome` {{.OutcomeEnum}},
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
    concat(toString(outcome), ' call to a removed tool through removal adapter ', adapter_id) AS detail
FROM {{table "events"}}
WHERE (event_name = 'mcp.drift.call') AND (outcome IN ('current', 'normalized')) AND (change_class != 'removal') AND (adapter_id != '');

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapters_mv{{.OnCluster}} TO {{table "adapters"}}
(
    `tenant` LowCardinality(String),
    `adapter_id` LowCardinality(String),
    `tool` LowCardinality(String),
    `revision_from` LowCardinality(String),
    `revision_to` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
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
FROM {{table "events_in"}}
WHERE event_name = 'mcp.drift.adapter';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1d_mv{{.OnCluster}} TO {{table "calls_1d"}}
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
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
FROM {{table "calls_1h"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
    `error_code` LowCardinality(String),
    `calls` UInt64,
    `side_effects` UInt64,
    `retries` UInt64,
    `calls_listed` UInt64,
    `calls_inferred` UInt64,
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
    uniqHLL12StateIf(if(session_id != '', session_id, run_id), (session_id != '') OR (run_id != '')) AS sessions,
    uniqHLL12StateIf(run_id, run_id != '') AS runs,
    min(time) AS first_seen,
    max(time) AS last_seen,
    max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}}
(
    `tenant` String,
    `event_id` UInt64,
    `event_name` {{.EventNameEnum}},
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
    `revision_client_source` {{.RevisionSourceEnum}},
    `revision_server` String,
    `revision_validated` String,
    `revision_before` String,
    `revision_after` String,
    `outcome` {{.OutcomeEnum}},
    `adapter_id` String,
    `change_class` {{.ChangeClassEnum}},
    `side_effect_started` Bool,
    `external_requests` Int64,
    `external_target` String,
    `error_code` String,
    `required_action` String,
    `retry_of` String,
    `retry_attempt` Int64,
    `retry_after` {{.OutcomeEnum}},
    `idempotency_key` String,
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
    `repair_duration_ms` Int64,
    `approval` {{.ApprovalEnum}},
    `privilege` {{.PrivilegeEnum}},
    `run_id` String,
    `session_age_s` Int64,
    `refresh_result` {{.RefreshResultEnum}},
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
    `attributes` Map(String, String),
    `audited` UInt8
)
AS SELECT
    *,
    event_name = 'mcp.drift.call' AS audited
FROM {{table "events_in"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.propagation_events_mv{{.OnCluster}} TO {{table "propagation_events"}}
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
FROM {{table "events"}}
WHERE ((session_id != '') OR (run_id != '')) AND ((event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')) OR ((event_name = 'mcp.drift.call') AND (revision_client != '') AND (revision_client != revision_server)));

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.recent_calls_mv{{.OnCluster}} TO {{table "recent_calls"}}
(
    `tenant` LowCardinality(String),
    `time` DateTime64(9, 'UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_client_source` {{.RevisionSourceEnum}},
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
    `adapter_id` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `privilege` {{.PrivilegeEnum}},
    `error_code` LowCardinality(String),
    `side_effect_started` Bool,
    `retry` UInt8,
    `retry_after` {{.OutcomeEnum}},
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
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.rejected_1h_mv{{.OnCluster}} TO {{table "rejected_1h"}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `revision_server` LowCardinality(String),
    `outcome` {{.OutcomeEnum}},
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
FROM {{table "calls_1h"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1d_mv{{.OnCluster}} TO {{table "repairs_1d"}}
(
    `tenant` LowCardinality(String),
    `day` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
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
FROM {{table "repairs_1h"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1h_mv{{.OnCluster}} TO {{table "repairs_1h"}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
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
FROM {{table "repairs_1m"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1m_mv{{.OnCluster}} TO {{table "repairs_1m"}}
(
    `tenant` LowCardinality(String),
    `minute` DateTime('UTC'),
    `tool` LowCardinality(String),
    `revision_client` LowCardinality(String),
    `change_class` {{.ChangeClassEnum}},
    `repair_action` {{.RepairActionEnum}},
    `repair_automatic` Bool,
    `repair_result` {{.RepairResultEnum}},
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
FROM {{table "events"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.retries_1h_mv{{.OnCluster}} TO {{table "retries_1h"}}
(
    `tenant` LowCardinality(String),
    `hour` DateTime('UTC'),
    `tool` LowCardinality(String),
    `service` LowCardinality(String),
    `environment` LowCardinality(String),
    `client_name` LowCardinality(String),
    `client_version` LowCardinality(String),
    `retry_after` {{.OutcomeEnum}},
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
FROM {{table "events"}}
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

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.tool_revisions_mv{{.OnCluster}} TO {{table "tool_revisions"}}
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
FROM {{table "events_in"}} AS e
WHERE event_name = 'mcp.drift.advertised'
GROUP BY
    tenant,
    tool,
    service,
    environment,
    revision;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.usage_1d_mv{{.OnCluster}} TO {{table "usage_1d"}}
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
FROM {{table "usage_1h"}}
GROUP BY
    tenant,
    day,
    tool,
    revision_client,
    revision_server,
    service,
    environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.usage_1h_mv{{.OnCluster}} TO {{table "usage_1h"}}
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
FROM {{table "calls_1h"}} AS c
GROUP BY
    tenant,
    hour,
    tool,
    revision_client,
    revision_server,
    service,
    environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_mv{{.OnCluster}} TO {{table "violation_candidates"}}
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
    `change_class` {{.ChangeClassEnum}},
    `outcome` {{.OutcomeEnum}},
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
    v.1 AS kind,
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
    v.2 AS detail
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
    FROM {{table "events"}}
    WHERE is_side_effect OR is_mixed OR is_removed OR is_retry
)
ARRAY JOIN arrayFilter(x -> ((x.1) != ''), [(if(is_side_effect, 'side_effect_rejected', ''), concat(toString(outcome), if(error_code != '', concat(' with ', error_code), ''), ' after its side effect had started', if(external_target != '', concat(' on ', external_target), ''), if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), ''))), (if(is_mixed, 'mixed_revision', ''), concat('validated under revision ', revision_validated, ', executed under revision ', revision_server)), (if(is_removed, 'removed_tool_success', ''), concat(toString(outcome), ' call to a removed revision (change class removal)')), (if(is_retry, 'retry_across_change', ''), if(event_name = 'mcp.drift.call', concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ', toString(change_class)), concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ', toString(change_class))))]) AS v;
