/*
 * A minimal equivalent of the webpack config that @grafana/create-plugin
 * scaffolds: the same entry discovery, externals, swc loader, AMD output,
 * copied assets and %VERSION%/%TODAY% replacement, without the dev-server
 * extras (live reload, eslint, type checking: run `npm run typecheck`).
 */
import CopyWebpackPlugin from 'copy-webpack-plugin';
import path from 'path';
import ReplaceInFileWebpackPlugin from 'replace-in-file-webpack-plugin';
import TerserPlugin from 'terser-webpack-plugin';
import webpack, { type Configuration } from 'webpack';

import { BuildModeWebpackPlugin } from './BuildModeWebpackPlugin';
import { DIST_DIR, SOURCE_DIR } from '../bundler/constants';
import { externals } from '../bundler/externals';
import { getEntries, getPackageJson, getPluginJson } from '../bundler/utils';

const pluginJson = getPluginJson();
const pluginVersion = getPackageJson().version;

type Env = { [key: string]: true | string | Env };

const config = async (env: Env): Promise<Configuration> => ({
  context: path.join(process.cwd(), SOURCE_DIR),
  devtool: env.production ? 'source-map' : 'eval-source-map',
  entry: await getEntries(),
  externals,
  mode: env.production ? 'production' : 'development',
  module: {
    rules: [
      {
        exclude: /(node_modules)/,
        test: /\.[tj]sx?$/,
        use: {
          loader: 'swc-loader',
          options: {
            jsc: {
              baseUrl: path.resolve(process.cwd(), SOURCE_DIR),
              target: 'es2015',
              loose: false,
              parser: { syntax: 'typescript', tsx: true, decorators: false, dynamicImport: true },
            },
          },
        },
      },
      { test: /\.css$/, use: ['style-loader', 'css-loader'] },
      {
        test: /\.(png|jpe?g|gif|svg)$/,
        type: 'asset/resource',
        generator: { filename: Boolean(env.production) ? '[hash][ext]' : '[file]' },
      },
    ],
  },
  optimization: {
    minimize: Boolean(env.production),
    minimizer: [
      new TerserPlugin({
        extractComments: { banner: false, filename: 'LICENSE.txt' },
        terserOptions: { format: { comments: false }, compress: { drop_console: ['log', 'info'] } },
      }),
    ],
  },
  output: {
    // Keep the backend executables that `make plugin` builds into dist/.
    clean: { keep: new RegExp(`(.*?_(amd64|arm(64)?)(.exe)?|go_plugin_build_manifest)`) },
    filename: '[name].js',
    chunkFilename: env.production ? '[name].js?_cache=[contenthash]' : '[name].js',
    library: { type: 'amd' },
    path: path.resolve(process.cwd(), DIST_DIR),
    publicPath: `public/plugins/${pluginJson.id}/`,
    uniqueName: pluginJson.id,
  },
  plugins: [
    new BuildModeWebpackPlugin(),
    new webpack.BannerPlugin({ banner: `/* ${pluginJson.id}@${pluginVersion} */`, raw: true, entryOnly: true }),
    new CopyWebpackPlugin({
      patterns: [
        { from: 'README.md', to: '.', force: true },
        { from: 'plugin.json', to: '.' },
        { from: 'dashboards/*.json', to: '.' },
        { from: 'img/*', to: '.' },
        { from: '../CHANGELOG.md', to: '.', force: true },
        { from: '../LICENSE', to: '.', force: true },
      ],
    }),
    new ReplaceInFileWebpackPlugin([
      {
        dir: DIST_DIR,
        test: [/(^|\/)plugin\.json$/, /(^|\/)README\.md$/],
        rules: [
          { search: /%VERSION%/g, replace: pluginVersion },
          { search: /%TODAY%/g, replace: new Date().toISOString().substring(0, 10) },
          { search: /%PLUGIN_ID%/g, replace: pluginJson.id },
        ],
      },
    ]),
  ],
  resolve: {
    extensions: ['.js', '.jsx', '.ts', '.tsx'],
    modules: [path.resolve(process.cwd(), 'src'), 'node_modules'],
    unsafeCache: true,
  },
});

export default config;
