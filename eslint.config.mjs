// Lint rules that guard the architecture (STYLE B2): libs never import services, a service
// never imports another service, only libs/proto touches generated code, no deep imports
// into another package's src, no import cycles, no floating promises.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const SERVICES = ['gateway', 'orchestrator', 'gather', 'tier-reader', 'budget-render', 'ledger', 'rewrite', 'sessions', 'indexer'];

const deepImports = { group: ['@ctxmesh/*/src/*', '@ctxmesh/*/dist/*'], message: 'import the package, not its internals' };
const genImports = { group: ['**/gen/**'], message: 'generated code is reached through @ctxmesh/proto only' };
const otherServices = (svc) => ({
  group: SERVICES.filter((s) => s !== svc).map((s) => `@ctxmesh/${s}`),
  message: 'a service never imports another service: call its RPC',
});
const gatewayLayers = (above) => ({ group: above.map((l) => `../${l}/*`), message: 'a lower gateway layer never imports a higher one' });

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'examples/**', 'libs/proto/src/gen/**', 'coverage/**', '.ctxmesh/**', 'bench/results/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'import-x/no-cycle': ['error', { maxDepth: 10, ignoreExternal: true }],
      'no-restricted-imports': ['error', { patterns: [deepImports, genImports] }],
    },
  },
  {
    files: ['libs/**/*.ts'],
    ignores: ['libs/proto/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [deepImports, genImports, { group: SERVICES.map((s) => `@ctxmesh/${s}`), message: 'libs never import services' }] },
      ],
    },
  },
  {
    // The one package that reaches generated code.
    files: ['libs/proto/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImports] }] },
  },
  ...SERVICES.map((svc) => ({
    files: [`services/${svc}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImports, genImports, otherServices(svc)] }] },
  })),
  // The gateway's layers (services/gateway/README.md): domain/ validates and mapping/ converts;
  // neither reaches up into the HTTP server, the routes, MCP or the clients, and the domain
  // does not know the wire either.
  {
    files: ['services/gateway/src/mapping/**/*.ts'],
    ignores: ['**/*.test.ts', '**/__tests__/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImports, genImports, otherServices('gateway'), gatewayLayers(['http', 'routes', 'mcp', 'clients'])] }] },
  },
  {
    files: ['services/gateway/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts', '**/__tests__/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [deepImports, genImports, otherServices('gateway'), gatewayLayers(['http', 'routes', 'mcp', 'clients', 'mapping'])] }],
    },
  },
);
