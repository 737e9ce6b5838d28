import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { Auth, ConnectionSettings, convertLegacyAuthProps } from '@grafana/plugin-ui';
import { Field, FieldSet, Input, SecretInput } from '@grafana/ui';

import { MCPDriftOptions, MCPDriftSecureJsonData } from '../types';

interface Props extends DataSourcePluginOptionsEditorProps<MCPDriftOptions, MCPDriftSecureJsonData> {}

function toNumber(s: string): number | undefined {
  const n = parseInt(s, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The one authentication method: an API bearer token, empty when the API runs without tokens. */
const TOKEN_METHOD = 'custom-token';

/**
 * The data source settings: the API URL; the token, TLS (CA certificate,
 * server name, skip-verify), mutual TLS (client certificate and key) and
 * custom headers through @grafana/plugin-ui's connection and auth
 * components, under Grafana's own jsonData/secureJsonData names, which the
 * backend reads with the plugin SDK's HTTP client options. Secrets — the
 * token, the certificates and key, the header values — go to
 * secureJsonData: Grafana keeps them encrypted and never shows them again.
 * Then the limits of a query.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const { jsonData, secureJsonFields } = options;
  const secureJsonData = (options.secureJsonData ?? {}) as MCPDriftSecureJsonData;

  const setJson = (patch: Partial<MCPDriftOptions>) => onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });

  const auth = convertLegacyAuthProps({ config: options, onChange: onOptionsChange });
  const token = (
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
  );

  return (
    <>
      <ConnectionSettings
        config={options}
        onChange={onOptionsChange}
        urlLabel="URL"
        urlPlaceholder="http://mcpdrift:8080"
        urlTooltip="The root of the mcpdrift API as the Grafana server reaches it, such as http://mcpdrift:8080; https:// for the TLS settings below"
      />
      <Auth
        {...auth}
        selectedMethod={TOKEN_METHOD}
        visibleMethods={[TOKEN_METHOD]}
        customMethods={[
          {
            id: TOKEN_METHOD,
            label: 'API token',
            description: 'The mcpdrift API authenticates report requests with a bearer token',
            component: token,
          },
        ]}
        onAuthMethodSelect={() => {}}
      />
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
