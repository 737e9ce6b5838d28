import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { DataSourceSettings } from '@grafana/data';

import { ConfigEditor } from './ConfigEditor';
import { MCPDriftOptions, MCPDriftSecureJsonData } from '../types';

function settings(patch: Partial<DataSourceSettings<MCPDriftOptions, MCPDriftSecureJsonData>> = {}) {
  return {
    id: 1,
    uid: 'x',
    orgId: 1,
    name: 'mcpdrift',
    type: 'mcpdrift-mcpdrift-datasource',
    typeName: 'mcpdrift',
    typeLogoUrl: '',
    access: 'proxy',
    url: '',
    user: '',
    database: '',
    basicAuth: false,
    basicAuthUser: '',
    isDefault: false,
    jsonData: {},
    secureJsonFields: {},
    readOnly: false,
    withCredentials: false,
    ...patch,
  } as DataSourceSettings<MCPDriftOptions, MCPDriftSecureJsonData>;
}

describe('ConfigEditor', () => {
  it('edits the API URL', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings()} onOptionsChange={onOptionsChange} />);
    fireEvent.change(screen.getByPlaceholderText('http://mcpdrift:8080'), { target: { value: 'http://api:8080' } });
    expect(onOptionsChange).toHaveBeenCalledWith(expect.objectContaining({ url: 'http://api:8080' }));
  });

  it('keeps the token in secureJsonData, never in jsonData', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings()} onOptionsChange={onOptionsChange} />);
    fireEvent.change(screen.getByPlaceholderText('API token'), { target: { value: 's3cret' } });
    const saved = onOptionsChange.mock.calls[0][0];
    expect(saved.secureJsonData).toEqual({ token: 's3cret' });
    expect(JSON.stringify(saved.jsonData)).not.toContain('s3cret');
  });

  it('shows a saved token as configured and resets it', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings({ secureJsonFields: { token: true } })} onOptionsChange={onOptionsChange} />);
    expect(screen.getByDisplayValue('configured')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: /reset/i }));
    const saved = onOptionsChange.mock.calls[0][0];
    expect(saved.secureJsonFields.token).toBe(false);
    expect(saved.secureJsonData.token).toBe('');
  });

  it('saves limits as numbers and clears invalid ones', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings()} onOptionsChange={onOptionsChange} />);
    fireEvent.change(screen.getByPlaceholderText('60'), { target: { value: '120' } });
    expect(onOptionsChange.mock.calls[0][0].jsonData.maxBucketRequests).toBe(120);
    fireEvent.change(screen.getByPlaceholderText('30'), { target: { value: '-4' } });
    expect(onOptionsChange.mock.calls[1][0].jsonData.timeoutSeconds).toBeUndefined();
  });
});
