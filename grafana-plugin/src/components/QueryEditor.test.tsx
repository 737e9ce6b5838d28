import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';

import { QueryEditor, reportName } from './QueryEditor';
import { VariableQueryEditor } from './VariableQueryEditor';
import { DataSource } from '../datasource';
import { catalog, MCPDriftQuery } from '../types';

function setup(query: MCPDriftQuery) {
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  render(<QueryEditor datasource={{} as DataSource} query={query} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

// selectOption opens a Select by its label and picks an option by text.
function selectOption(label: string, option: string) {
  const input = screen.getByLabelText(label);
  fireEvent.keyDown(input, { key: 'ArrowDown' });
  fireEvent.click(screen.getByText(option));
}

describe('QueryEditor', () => {
  it('offers every report and a time series', () => {
    setup({ refId: 'A', queryType: 'repairs' });
    const input = screen.getByLabelText('Query');
    fireEvent.keyDown(input, { key: 'ArrowDown' });
    for (const r of catalog.reports) {
      expect(screen.getAllByText(r.title).length).toBeGreaterThan(0);
    }
    expect(screen.getByText('Time series')).toBeInTheDocument();
  });

  it('turns a report into a time series of the same report and runs it', () => {
    const { onChange, onRunQuery } = setup({ refId: 'A', queryType: 'rejections' });
    selectOption('Query', 'Time series');
    expect(onChange).toHaveBeenCalledWith(expect.objectContaining({ queryType: 'timeseries', report: 'rejections' }));
    expect(onRunQuery).toHaveBeenCalled();
  });

  it("lists a time series' counts and groupings from the catalog", () => {
    const { onChange } = setup({ refId: 'A', queryType: 'timeseries', report: 'rejections' });
    selectOption('Counts', 'Rejected with side effect started');
    expect(onChange).toHaveBeenCalledWith(expect.objectContaining({ metrics: ['side_effect_violations'] }));
    selectOption('Group by', 'error_code');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ groupBy: ['error_code'] }));
  });

  it("draws the clients' reports: revision sources' unknown share, contract errors by tool", () => {
    const { onChange } = setup({ refId: 'A', queryType: 'timeseries', report: 'revision-sources' });
    selectOption('Counts', 'Unknown share');
    expect(onChange).toHaveBeenCalledWith(expect.objectContaining({ report: 'revision-sources', metrics: ['unknown_share'] }));
    selectOption('Group by', 'client');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ groupBy: ['client'] }));
  });

  it('groups contract errors by tool', () => {
    const { onChange } = setup({ refId: 'A', queryType: 'timeseries', report: 'contract-errors' });
    selectOption('Counts', 'Failed refreshes');
    expect(onChange).toHaveBeenCalledWith(expect.objectContaining({ metrics: ['failed_refreshes'] }));
    selectOption('Group by', 'tool');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ groupBy: ['tool'] }));
  });

  it('shows the retirement thresholds for adapter retirement only', () => {
    const { onChange, onRunQuery } = setup({ refId: 'A', queryType: 'adapter-retirement' });
    fireEvent.change(screen.getByLabelText('Max calls'), { target: { value: '5' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ maxCalls: 5 }));
    fireEvent.change(screen.getByLabelText('Max share'), { target: { value: '0.5%' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ maxShare: '0.5%' }));
    fireEvent.change(screen.getByLabelText('Long session'), { target: { value: '72h' } });
    fireEvent.blur(screen.getByLabelText('Long session'));
    expect(onRunQuery).toHaveBeenCalled();
    fireEvent.change(screen.getByLabelText('Window'), { target: { value: '14d' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ window: '14d' }));
  });

  it("offers a tool's revisions, with the tool and without the client filters", () => {
    const { onChange, onRunQuery } = setup({ refId: 'A', queryType: 'repairs' });
    selectOption('Query', 'Revisions of a tool');
    expect(onChange).toHaveBeenCalledWith(expect.objectContaining({ queryType: 'revisions' }));
    expect(onRunQuery).toHaveBeenCalled();
  });

  it('asks a revisions query for its tool only', () => {
    const { onChange } = setup({ refId: 'A', queryType: 'revisions' });
    expect(reportName({ refId: 'A', queryType: 'revisions' })).toBeUndefined();
    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: 'deploy_preview' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ tool: 'deploy_preview' }));
    expect(screen.getByLabelText('Service')).toBeInTheDocument();
    expect(screen.queryByLabelText('Client')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Exclude clients')).not.toBeInTheDocument();
  });

  it('hides the thresholds of other reports', () => {
    setup({ refId: 'A', queryType: 'repairs' });
    expect(screen.queryByLabelText('Max calls')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Run')).not.toBeInTheDocument();
  });

  it('edits the filters and splits excluded clients', () => {
    const { onChange } = setup({ refId: 'A', queryType: 'stale-usage' });
    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: '$tool' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ tool: '$tool' }));
    fireEvent.change(screen.getByLabelText('Exclude clients'), { target: { value: 'ci-runner, eval@1.2.0,' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ excludeClients: ['ci-runner', 'eval@1.2.0'] }));
  });

  it('searches the audit by run and keeps stale calls', () => {
    const { onChange } = setup({ refId: 'A', queryType: 'audit' });
    fireEvent.change(screen.getByLabelText('Run'), { target: { value: 'run-1' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ run: 'run-1' }));
    fireEvent.click(screen.getByLabelText('Stale only'));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ staleOnly: true }));
  });

  it('names the report a query reads', () => {
    expect(reportName({ refId: 'A', queryType: 'timeseries', report: 'audit' })).toBe('audit');
    expect(reportName({ refId: 'A', queryType: 'violations' })).toBe('violations');
    expect(reportName({ refId: 'A', queryType: 'contract-errors' })).toBe('contract-errors');
    expect(reportName({ refId: 'A', queryType: 'variable' })).toBeUndefined();
  });
});

describe('VariableQueryEditor', () => {
  it('picks what a variable lists', () => {
    const onChange = jest.fn();
    render(<VariableQueryEditor query={{ refId: 'V', variable: 'tools' }} onChange={onChange} />);
    selectOption('Values of', 'Environments');
    expect(onChange).toHaveBeenCalledWith({ refId: 'V', variable: 'environments' });
  });
});
