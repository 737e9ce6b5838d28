import React, { ChangeEvent } from 'react';
import { QueryEditorProps, SelectableValue } from '@grafana/data';
import { InlineField, InlineFieldRow, InlineSwitch, Input, MultiSelect, Select, Stack } from '@grafana/ui';

import { DataSource } from '../datasource';
import {
  MCPDriftOptions,
  MCPDriftQuery,
  QUERY_TYPE_OPTIONS,
  QueryType,
  ReportName,
  reportOf,
  VIOLATION_KINDS,
} from '../types';

type Props = QueryEditorProps<DataSource, MCPDriftQuery, MCPDriftOptions>;

const LW = 16;

/** The report a query reads: its own type, or the report of a time series. */
export function reportName(q: MCPDriftQuery): ReportName | undefined {
  if (q.queryType === 'timeseries') {
    return q.report;
  }
  return q.queryType === 'variable' || q.queryType === 'revisions' ? undefined : q.queryType;
}

/**
 * Edits one query: the report (or a time series of a report's counts), the
 * filters every report takes, and the report's own options — the retirement
 * verdict's thresholds, the audit search, the violation kind.
 */
export function QueryEditor({ query, onChange, onRunQuery }: Props) {
  const report = reportName(query);
  const info = reportOf(report);

  const change = (patch: Partial<MCPDriftQuery>, run = false) => {
    onChange({ ...query, ...patch });
    if (run) {
      onRunQuery();
    }
  };
  // Text fields update as one types and run the query when left.
  const text = (key: keyof MCPDriftQuery, label: string, placeholder: string, tooltip: string, width = 24) => (
    <InlineField label={label} labelWidth={LW} tooltip={tooltip}>
      <Input
        id={`mcpdrift-${key}`}
        aria-label={label}
        width={width}
        placeholder={placeholder}
        value={(query[key] as string | undefined) ?? ''}
        onChange={(e: ChangeEvent<HTMLInputElement>) => change({ [key]: e.target.value })}
        onBlur={onRunQuery}
      />
    </InlineField>
  );

  const onQueryType = (v: SelectableValue<QueryType>) => {
    const queryType = v.value!;
    const patch: Partial<MCPDriftQuery> = { queryType };
    if (queryType === 'timeseries' && !query.report) {
      patch.report = reportName(query) ?? 'rejections';
      patch.metrics = undefined;
      patch.groupBy = undefined;
    }
    change(patch, true);
  };

  const retirement = report === 'adapter-retirement';
  // A revisions query reads the registry: one tool (required), no client.
  const revisions = query.queryType === 'revisions';
  return (
    <Stack direction="column" gap={0}>
      <InlineFieldRow>
        <InlineField label="Query" labelWidth={LW} tooltip="A report as a table, or a time series of a report's counts">
          <Select
            inputId="mcpdrift-query-type"
            aria-label="Query"
            width={32}
            options={QUERY_TYPE_OPTIONS}
            value={query.queryType}
            onChange={onQueryType}
          />
        </InlineField>
        {query.queryType === 'timeseries' && (
          <>
            <InlineField label="Report" labelWidth={10}>
              <Select
                inputId="mcpdrift-report"
                aria-label="Report"
                width={28}
                options={QUERY_TYPE_OPTIONS.filter((o) => o.value !== 'timeseries' && o.value !== 'revisions')}
                value={query.report}
                onChange={(v) => change({ report: v.value as ReportName, metrics: undefined, groupBy: undefined }, true)}
              />
            </InlineField>
            <InlineField label="Counts" labelWidth={10} tooltip="Empty draws the report's main count">
              <MultiSelect
                inputId="mcpdrift-metrics"
                aria-label="Counts"
                width={40}
                placeholder={info?.metrics[0]?.display}
                options={(info?.metrics ?? []).map((m) => ({ label: m.display, value: m.name }))}
                value={query.metrics ?? []}
                onChange={(vs) => change({ metrics: vs.map((v) => v.value!) }, true)}
              />
            </InlineField>
            <InlineField label="Group by" labelWidth={10} tooltip="One series per combination of these values">
              <MultiSelect
                inputId="mcpdrift-group-by"
                aria-label="Group by"
                width={32}
                options={(info?.dimensions ?? []).map((d) => ({ label: d, value: d }))}
                value={query.groupBy ?? []}
                onChange={(vs) => change({ groupBy: vs.map((v) => v.value!) }, true)}
              />
            </InlineField>
          </>
        )}
      </InlineFieldRow>
      <InlineFieldRow>
        {text(
          'tool',
          'Tool',
          '$tool',
          revisions
            ? 'The tool whose advertised revisions to list (required); a variable works'
            : report === 'contract-errors'
              ? "Only the contract errors about this tool's output; the refreshes stay whole, as a refresh re-lists every tool"
              : 'Only this tool; a variable works, its All option means every tool'
        )}
        {text('service', 'Service', '$service', 'Only this service (service.name)')}
        {text('environment', 'Environment', '$environment', 'Only this environment (deployment.environment.name)')}
      </InlineFieldRow>
      {!revisions && (
        <InlineFieldRow>
          {text('client', 'Client', 'cursor@0.48.0', 'Only this client, as a name or name@version')}
          <InlineField label="Exclude clients" labelWidth={LW} tooltip="Leave these clients out, comma separated (names or name@version)">
            <Input
              id="mcpdrift-exclude-clients"
              aria-label="Exclude clients"
              width={40}
              placeholder="ci-runner, eval-bot@1.2.0"
              value={(query.excludeClients ?? []).join(', ')}
              onChange={(e: ChangeEvent<HTMLInputElement>) =>
                change({
                  excludeClients: e.target.value
                    .split(',')
                    .map((s) => s.trim())
                    .filter((s) => s !== ''),
                })
              }
              onBlur={onRunQuery}
            />
          </InlineField>
        </InlineFieldRow>
      )}
      {retirement && (
        <>
          <InlineFieldRow>
            {text('adapter', 'Adapter', '$adapter', 'Only this adapter id')}
            {query.queryType !== 'timeseries' &&
              text('window', 'Window', '14d', 'Judge over this duration ending at the range end instead of the range (14d, 36h)', 12)}
          </InlineFieldRow>
          {query.queryType !== 'timeseries' && (
            <InlineFieldRow>
              <InlineField
                label="Max calls"
                labelWidth={LW}
                tooltip="Most calls through an adapter in the window that still allow retiring it. With neither threshold set, it is 0."
              >
                <Input
                  id="mcpdrift-max-calls"
                  aria-label="Max calls"
                  type="number"
                  min={0}
                  width={12}
                  value={query.maxCalls ?? ''}
                  onChange={(e: ChangeEvent<HTMLInputElement>) => {
                    const n = parseInt(e.target.value, 10);
                    change({ maxCalls: Number.isFinite(n) && n >= 0 ? n : undefined });
                  }}
                  onBlur={onRunQuery}
                />
              </InlineField>
              {text('maxShare', 'Max share', '0.5%', "Highest share of the tool's calls through the adapter that still allows retiring it (0.005 or 0.5%)", 12)}
              {text('longSession', 'Long session', '24h', 'Session age from which a caller counts as long-running (at_risk)', 12)}
              <InlineField label="Top clients" labelWidth={LW} tooltip="Blocking clients listed per adapter (1 to 100)">
                <Input
                  id="mcpdrift-top-clients"
                  aria-label="Top clients"
                  type="number"
                  min={1}
                  max={100}
                  width={12}
                  value={query.topClients ?? ''}
                  onChange={(e: ChangeEvent<HTMLInputElement>) => {
                    const n = parseInt(e.target.value, 10);
                    change({ topClients: Number.isFinite(n) && n > 0 ? n : undefined });
                  }}
                  onBlur={onRunQuery}
                />
              </InlineField>
            </InlineFieldRow>
          )}
        </>
      )}
      {report === 'audit' && (
        <InlineFieldRow>
          {text('run', 'Run', 'run id', 'Only calls of this agent run (dev.mcpdrift.run.id)')}
          {text('session', 'Session', 'session id', 'Only calls of this session (mcp.session.id)')}
          {text('requestId', 'Request', 'request id', 'Only the call with this JSON-RPC request id')}
          <InlineField label="Stale only" labelWidth={12} tooltip="Only calls whose client planned with another revision than the one that executed">
            <InlineSwitch
              id="mcpdrift-stale-only"
              aria-label="Stale only"
              value={!!query.staleOnly}
              onChange={(e) => change({ staleOnly: e.currentTarget.checked }, true)}
            />
          </InlineField>
        </InlineFieldRow>
      )}
      {report === 'violations' && (
        <InlineFieldRow>
          <InlineField label="Kind" labelWidth={LW} tooltip="Only this kind of violation">
            <Select
              inputId="mcpdrift-kind"
              aria-label="Kind"
              width={32}
              isClearable
              placeholder="every kind"
              options={VIOLATION_KINDS.map((k) => ({ label: k, value: k }))}
              value={query.kind || null}
              onChange={(v) => change({ kind: v?.value ?? undefined }, true)}
            />
          </InlineField>
        </InlineFieldRow>
      )}
    </Stack>
  );
}
