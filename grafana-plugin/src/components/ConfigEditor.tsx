import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { Field, FieldSet, Input, SecretInput } from '@grafana/ui';

import { MCPDriftOptions, MCPDriftSecureJsonData } from '../types';

interface Props extends DataSourcePluginOptionsEditorProps<MCPDriftOptions, MCPDriftSecureJsonData> {}

function toNumber(s: string): number | undefined {
  const n = parseInt(s, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * The data source settings: the API URL and token (kept encrypted by
 * Grafana, never shown again once saved), and the limits of a query.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const { jsonData, secureJsonFields } = options;
  const secureJsonData = (options.secureJsonData ?? {}) as MCPDriftSecureJsonData;

  const setJson = (patch: Partial<MCPDriftOptions>) => onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });

  return (
    <>
      <FieldSet label="mcpdrift API">
        <Field
          label="URL"
          description="The root of the mcpdrift API as the Grafana server reaches it, such as http://mcpdrift:8080"
          required
        >
          <Input
            id="config-url"
            width={60}
            value={options.url ?? ''}
            placeholder="http://mcpdrift:8080"
            onChange={(e: ChangeEvent<HTMLInputElement>) => onOptionsChange({ ...options, url: e.target.value })}
          />
        </Field>
        <Field label="Token" description="An API bearer token; its tenant decides what the reports show. Leave empty when the API runs without tokens.">
          <SecretInput
            id="config-token"
            width={60}
            isConfigured={!!secureJsonFields?.token}
            value={secureJsonData.token ?? ''}
            placeholder="API token"
            onReset={() =>
              onOptionsChange({
                ...options,
                secureJsonFields: { ...secureJsonFields, token: false },
                secureJsonData: { ...secureJsonData, token: '' },
              })
            }
            onChange={(e: ChangeEvent<HTMLInputElement>) =>
              onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, token: e.target.value } })
            }
          />
        </Field>
      </FieldSet>
      <FieldSet label="Limits">
        <Field label="Timeout (seconds)" description="Longest wait for one API request. Default 30.">
          <Input
            id="config-timeout"
            type="number"
            width={20}
            value={jsonData.timeoutSeconds ?? ''}
            placeholder="30"
            onChange={(e: ChangeEvent<HTMLInputElement>) => setJson({ timeoutSeconds: toNumber(e.target.value) })}
          />
        </Field>
        <Field
          label="Report requests per time series"
          description="A time series of a rollup report requests the report once per interval; the interval widens so that the range needs no more requests than this. Default 60."
        >
          <Input
            id="config-max-buckets"
            type="number"
            width={20}
            value={jsonData.maxBucketRequests ?? ''}
            placeholder="60"
            onChange={(e: ChangeEvent<HTMLInputElement>) => setJson({ maxBucketRequests: toNumber(e.target.value) })}
          />
        </Field>
        <Field label="Rows per query" description="Most rows read from the violations and audit reports for one query. Default 10000.">
          <Input
            id="config-max-rows"
            type="number"
            width={20}
            value={jsonData.maxRows ?? ''}
            placeholder="10000"
            onChange={(e: ChangeEvent<HTMLInputElement>) => setJson({ maxRows: toNumber(e.target.value) })}
          />
        </Field>
      </FieldSet>
    </>
  );
}
