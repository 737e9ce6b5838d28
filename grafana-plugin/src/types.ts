import { DataQuery, DataSourceJsonData } from '@grafana/schema';

import catalogJson from './catalog.json';

/** What the backend answers; src/catalog.json is written by the Go tests. */
export interface MetricInfo {
  name: string;
  display: string;
  unit: string;
  max?: boolean;
}

export interface CatalogReport {
  name: ReportName;
  title: string;
  metrics: MetricInfo[];
  dimensions: string[];
  timed: boolean;
}

export interface Catalog {
  queryTypes: QueryType[];
  variables: VariableName[];
  reports: CatalogReport[];
}

export const catalog = catalogJson as Catalog;

export type ReportName =
  | 'stale-usage'
  | 'rejections'
  | 'repairs'
  | 'adapter-retirement'
  | 'propagation'
  | 'violations'
  | 'audit'
  | 'revision-sources'
  | 'contract-errors';

export type QueryType = ReportName | 'revisions' | 'timeseries' | 'variable';

export type VariableName = 'tools' | 'services' | 'environments' | 'clients' | 'adapters';

/** What a template variable's "All" option stands for: no filter. */
export const ALL_VALUE = '*';

export const VIOLATION_KINDS = ['side_effect_rejected', 'mixed_revision', 'removed_tool_success', 'retry_across_change'];

/** The model of one query, as pkg/plugin/query.go reads it. */
export interface MCPDriftQuery extends DataQuery {
  queryType?: QueryType;
  report?: ReportName;
  metrics?: string[];
  groupBy?: string[];

  tool?: string;
  service?: string;
  environment?: string;
  client?: string;
  excludeClients?: string[];

  adapter?: string;
  window?: string;
  maxCalls?: number;
  maxShare?: string;
  longSession?: string;
  topClients?: number;

  run?: string;
  session?: string;
  requestId?: string;
  staleOnly?: boolean;
  kind?: string;

  variable?: VariableName;
}

export const DEFAULT_QUERY: Partial<MCPDriftQuery> = {
  queryType: 'adapter-retirement',
};

/** The variable query model of the variable editor. */
export interface MCPDriftVariableQuery extends DataQuery {
  variable: VariableName;
  /** Lists "None" (value "*", no filter) first: for a variable whose every value narrows, such as the excluded clients. */
  none?: boolean;
}

/**
 * Settings saved in jsonData; the API URL is the data source's URL. The
 * TLS switches and the custom header names (httpHeaderName1, …) are
 * Grafana's names, which @grafana/plugin-ui writes and the plugin SDK reads.
 */
export interface MCPDriftOptions extends DataSourceJsonData {
  timeoutSeconds?: number;
  maxRows?: number;
  tlsAuth?: boolean;
  tlsAuthWithCACert?: boolean;
  tlsSkipVerify?: boolean;
  serverName?: string;
  [header: `httpHeaderName${number}`]: string | undefined;
}

/**
 * Settings saved encrypted; never sent back to the browser. The custom
 * header values are httpHeaderValue1, … beside these.
 */
export interface MCPDriftSecureJsonData {
  token?: string;
  tlsCACert?: string;
  tlsClientCert?: string;
  tlsClientKey?: string;
}

export function reportOf(name?: string): CatalogReport | undefined {
  return catalog.reports.find((r) => r.name === name);
}

/** The query types an editor offers, with a label a person reads. */
export const QUERY_TYPE_OPTIONS: Array<{ label: string; value: QueryType; description: string }> = [
  ...catalog.reports.map((r) => ({ label: r.title, value: r.name as QueryType, description: `The ${r.title.toLowerCase()} report as a table` })),
  {
    label: 'Revisions of a tool',
    value: 'revisions',
    description: "The registry's history of one tool's advertised revisions, with the change between them",
  },
  { label: 'Time series', value: 'timeseries', description: "A report's counts over the time range, per interval" },
];
