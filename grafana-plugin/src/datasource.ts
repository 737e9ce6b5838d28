import {
  CoreApp,
  CustomVariableSupport,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceInstanceSettings,
  ScopedVars,
} from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv, TemplateSrv } from '@grafana/runtime';
import { Observable } from 'rxjs';

import { VariableQueryEditor } from './components/VariableQueryEditor';
import { DEFAULT_QUERY, MCPDriftOptions, MCPDriftQuery, MCPDriftVariableQuery } from './types';

/** The string fields of a query that may hold template variables. */
const INTERPOLATED: Array<keyof MCPDriftQuery> = [
  'tool',
  'service',
  'environment',
  'client',
  'adapter',
  'window',
  'maxShare',
  'longSession',
  'run',
  'session',
  'requestId',
  'kind',
];

/**
 * The mcpdrift data source: every query runs in the Go backend (so that
 * alerting works), which reads the mcpdrift API.
 */
export class DataSource extends DataSourceWithBackend<MCPDriftQuery, MCPDriftOptions> {
  constructor(
    instanceSettings: DataSourceInstanceSettings<MCPDriftOptions>,
    private readonly templateSrv: TemplateSrv = getTemplateSrv()
  ) {
    super(instanceSettings);
    this.variables = new MCPDriftVariableSupport(this);
  }

  getDefaultQuery(_: CoreApp): Partial<MCPDriftQuery> {
    return DEFAULT_QUERY;
  }

  /** Skips hidden queries and those without a report. */
  filterQuery(query: MCPDriftQuery): boolean {
    return !query.hide && !!query.queryType;
  }

  /**
   * Replaces template variables in the filters. A variable's "All" option
   * is "*" (the dashboards' allValue), which the backend reads as no
   * filter; excluded clients may be a multi-value variable.
   */
  applyTemplateVariables(query: MCPDriftQuery, scopedVars: ScopedVars): MCPDriftQuery {
    const out: MCPDriftQuery = { ...query };
    for (const key of INTERPOLATED) {
      const v = out[key];
      if (typeof v === 'string' && v !== '') {
        (out as unknown as Record<string, string>)[key] = this.templateSrv.replace(v, scopedVars);
      }
    }
    if (out.excludeClients?.length) {
      out.excludeClients = out.excludeClients
        .flatMap((c) => this.templateSrv.replace(c, scopedVars, 'csv').split(','))
        .map((c) => c.trim())
        .filter((c) => c !== '' && c !== '*');
    }
    return out;
  }
}

/** Template variables list tools, services, environments, clients or adapters. */
export class MCPDriftVariableSupport extends CustomVariableSupport<DataSource, MCPDriftVariableQuery, MCPDriftQuery> {
  editor = VariableQueryEditor;

  constructor(private readonly datasource: DataSource) {
    super();
  }

  query(request: DataQueryRequest<MCPDriftVariableQuery>): Observable<DataQueryResponse> {
    const targets: MCPDriftQuery[] = request.targets.map((t) => ({
      refId: t.refId,
      queryType: 'variable',
      variable: t.variable ?? 'tools',
      none: t.none,
    }));
    return this.datasource.query({ ...request, targets });
  }
}
