import { DataSourcePlugin } from '@grafana/data';

import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { DataSource } from './datasource';
import { MCPDriftOptions, MCPDriftQuery, MCPDriftSecureJsonData } from './types';

export const plugin = new DataSourcePlugin<DataSource, MCPDriftQuery, MCPDriftOptions, MCPDriftSecureJsonData>(DataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
