import React from 'react';
import fs from 'fs';
import path from 'path';
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
    fireEvent.change(screen.getByPlaceholderText('10000'), { target: { value: '120' } });
    expect(onOptionsChange.mock.calls[0][0].jsonData.maxRows).toBe(120);
    fireEvent.change(screen.getByPlaceholderText('30'), { target: { value: '-4' } });
    expect(onOptionsChange.mock.calls[1][0].jsonData.timeoutSeconds).toBeUndefined();
  });
});

/**
 * Renders the editor as Grafana does: each change becomes the next
 * options; the last one is what the save button would send.
 */
function Harness({ initial, saved }: { initial: ReturnType<typeof settings>; saved: jest.Mock }) {
  const [options, setOptions] = React.useState(initial);
  return (
    <ConfigEditor
      options={options}
      onOptionsChange={(o) => {
        saved(o);
        setOptions(o);
      }}
    />
  );
}

function lastSaved(saved: jest.Mock) {
  return saved.mock.calls[saved.mock.calls.length - 1][0];
}

function type(container: HTMLElement, selector: string, value: string) {
  const el = container.querySelector(selector);
  if (!el) {
    throw new Error(`no ${selector}`);
  }
  fireEvent.change(el, { target: { value } });
}

describe('ConfigEditor TLS, mutual TLS and custom headers', () => {
  // The settings the Go test TestTLSSettings connects to the API with.
  const golden = JSON.parse(
    fs.readFileSync(path.join(__dirname, '../../pkg/plugin/testdata/editor_tls_settings.json'), 'utf8')
  );

  it('writes the CA, server name, client certificate and key and a header as the backend reads them', () => {
    const saved = jest.fn();
    const { container } = render(<Harness initial={settings({ url: 'https://mcpdrift:8443' })} saved={saved} />);

    fireEvent.click(screen.getByLabelText('Add self-signed certificate'));
    type(container, '#self-signed-certificate-input', '<CA certificate PEM>');
    fireEvent.click(screen.getByLabelText('TLS Client Authentication'));
    type(container, '#client-auth-servername-input', 'localhost');
    type(container, '#client-auth-client-certificate-input', '<client certificate PEM>');
    type(container, '#client-auth-client-key-input', '<client key PEM>');

    fireEvent.click(screen.getByRole('button', { name: 'Expand section HTTP headers' }));
    fireEvent.click(screen.getByRole('button', { name: /add header/i }));
    const name = screen.getByPlaceholderText('X-Custom-Header');
    fireEvent.change(name, { target: { value: 'Authorization' } });
    const value = screen.getByPlaceholderText('Header value');
    fireEvent.change(value, { target: { value: 'Bearer <token>' } });
    fireEvent.blur(value);

    const out = lastSaved(saved);
    expect(out.url).toBe('https://mcpdrift:8443');
    expect(out.jsonData).toEqual(golden.jsonData);
    expect(out.secureJsonData).toEqual(golden.secureJsonData);
    // No secret in the clear settings.
    const clear = JSON.stringify(out.jsonData);
    for (const secret of Object.values(golden.secureJsonData) as string[]) {
      expect(clear).not.toContain(secret);
    }
  });

  it('sets skip-verify and keeps saved secrets as configured', () => {
    const saved = jest.fn();
    render(
      <Harness
        initial={settings({
          url: 'https://mcpdrift:8443',
          jsonData: { tlsAuth: true, serverName: 'mcpdrift.internal', httpHeaderName1: 'X-Scope-OrgID' },
          secureJsonFields: { tlsClientCert: true, tlsClientKey: true, httpHeaderValue1: true },
        })}
        saved={saved}
      />
    );
    expect(screen.getByDisplayValue('mcpdrift.internal')).toBeInTheDocument();
    expect(screen.getByDisplayValue('X-Scope-OrgID')).toBeInTheDocument();
    fireEvent.click(screen.getByLabelText('Skip TLS certificate validation'));
    const out = lastSaved(saved);
    expect(out.jsonData).toEqual({ tlsAuth: true, serverName: 'mcpdrift.internal', httpHeaderName1: 'X-Scope-OrgID', tlsSkipVerify: true });
    expect(out.secureJsonFields).toEqual({ tlsClientCert: true, tlsClientKey: true, httpHeaderValue1: true });
    expect(out.secureJsonData ?? {}).toEqual({});
  });

  it('turning client authentication off clears the certificate, the key and the server name', () => {
    const saved = jest.fn();
    render(
      <Harness
        initial={settings({
          jsonData: { tlsAuth: true, serverName: 'mcpdrift.internal' },
          secureJsonFields: { tlsClientCert: true, tlsClientKey: true },
        })}
        saved={saved}
      />
    );
    fireEvent.click(screen.getByLabelText('TLS Client Authentication'));
    const out = lastSaved(saved);
    expect(out.jsonData).toEqual({ tlsAuth: false, serverName: '' });
    expect(out.secureJsonFields).toEqual({ tlsClientCert: false, tlsClientKey: false });
    expect(out.secureJsonData).toEqual({ tlsClientCert: '', tlsClientKey: '' });
  });
});
