-- Version 5: events_in, the Null table every insert goes to, takes plain
-- strings instead of LowCardinality(String).
--
-- Parsing an insert into a LowCardinality column adds each row's value to
-- the column's dictionary one by one, so parsing into events_in cost
-- several times what parsing the same values as plain strings costs. The
-- tables the views write keep their LowCardinality columns: the conversion
-- happens there, a whole column at a time, for less than the parse saved,
-- so the insert as a whole is cheaper (docs/capacity.md, "Schema
-- decisions"). A Null table holds no data, so the ALTER changes metadata
-- only.
ALTER TABLE {{table "events_in"}}{{.OnCluster}}
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
{{if .Cluster}}
-- Cluster mode: the Distributed table in front of events_in takes the same
-- types, so that blocks reach the shards unconverted.
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
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
{{end}}
