import { DataSourceInstanceSettings, ScopedVars } from '@grafana/data';
import { TemplateSrv } from '@grafana/runtime';

import { DataSource } from './datasource';
import { MCPDriftOptions } from './types';

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
});
