import { DataQueryRequest, DataSourceInstanceSettings, ScopedVars } from '@grafana/data';
import { TemplateSrv } from '@grafana/runtime';
import { of } from 'rxjs';

import { DataSource, MCPDriftVariableSupport } from './datasource';
import { MCPDriftOptions, MCPDriftVariableQuery } from './types';

// A template service that knows $tool (All), $service and $skip (two values).
const templateSrv = {
  replace: (target: string, _vars?: ScopedVars, format?: string) =>
    target
      .replace('$tool', '*')
      .replace('$service', 'tracker')
      .replace('$skip', format === 'csv' ? 'ci-runner,eval' : '{ci-runner,eval}'),
} as unknown as TemplateSrv;

const settings = { id: 1, uid: 'x', type: 'mcpdrift-mcpdrift-datasource', name: 'mcpdrift', jsonData: {} } as unknown as DataSourceInstanceSettings<MCPDriftOptions>;

describe('DataSource', () => {
  const ds = new DataSource(settings, templateSrv);

  it('replaces template variables in the filters', () => {
    const q = ds.applyTemplateVariables(
      { refId: 'A', queryType: 'rejections', tool: '$tool', service: '$service', excludeClients: ['$skip', 'bot'] },
      {}
    );
    expect(q.tool).toBe('*');
    expect(q.service).toBe('tracker');
    expect(q.excludeClients).toEqual(['ci-runner', 'eval', 'bot']);
  });

  it('skips hidden queries and those without a report', () => {
    expect(ds.filterQuery({ refId: 'A', queryType: 'repairs' })).toBe(true);
    expect(ds.filterQuery({ refId: 'A', queryType: 'repairs', hide: true })).toBe(false);
    expect(ds.filterQuery({ refId: 'A' })).toBe(false);
  });

  it('supports template variables through the backend', () => {
    expect(ds.variables).toBeDefined();
  });

  it('passes a variable query and its None option to the backend', () => {
    const spy = jest.spyOn(ds, 'query').mockReturnValue(of({ data: [] }));
    const support = ds.variables as MCPDriftVariableSupport;
    support.query({ targets: [{ refId: 'V', variable: 'clients', none: true }] } as unknown as DataQueryRequest<MCPDriftVariableQuery>);
    expect(spy.mock.calls[0][0].targets).toEqual([{ refId: 'V', queryType: 'variable', variable: 'clients', none: true }]);
    spy.mockRestore();
  });
});
