import React from 'react';
import { InlineField, Select } from '@grafana/ui';

import { catalog, MCPDriftVariableQuery, VariableName } from '../types';

const LABELS: Record<VariableName, string> = {
  tools: 'Tools',
  services: 'Services',
  environments: 'Environments',
  clients: 'Clients (name@version)',
  adapters: 'Adapters',
};

interface Props {
  query: MCPDriftVariableQuery;
  onChange: (query: MCPDriftVariableQuery) => void;
}

/** Picks what a template variable lists. */
export function VariableQueryEditor({ query, onChange }: Props) {
  const options = catalog.variables.map((v) => ({ label: LABELS[v] ?? v, value: v }));
  return (
    <InlineField label="Values of" labelWidth={14} tooltip="What the variable lists, as seen in the dashboard's time range">
      <Select
        inputId="mcpdrift-variable"
        aria-label="Values of"
        width={32}
        options={options}
        value={query.variable ?? 'tools'}
        onChange={(v) => onChange({ ...query, variable: v.value as VariableName })}
      />
    </InlineField>
  );
}
