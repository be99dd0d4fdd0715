// Jest projects: unit (colocated, no network), integration (real servers on port 0,
// real Redis/NATS), e2e (whole mesh). TypeScript is compiled by swc straight from
// source; workspace packages resolve to their src/ so no build is needed to test.
const path = require('node:path');
const fs = require('node:fs');

const root = __dirname;
const libs = fs.readdirSync(path.join(root, 'libs'));
const services = fs.readdirSync(path.join(root, 'services'));

/** @type {Record<string, string>} */
const moduleNameMapper = {};
for (const l of libs) moduleNameMapper[`^@ctxmesh/${l}$`] = `<rootDir>/libs/${l}/src/index.ts`;
for (const s of services) moduleNameMapper[`^@ctxmesh/${s}$`] = `<rootDir>/services/${s}/src/index.ts`;
moduleNameMapper['^@ctxmesh/ctxmesh$'] = '<rootDir>/apps/ctxmesh/src/index.ts';

const transform = {
  '^.+\\.(t|j)sx?$': ['@swc/jest', {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  }],
};

const common = {
  rootDir: root,
  transform,
  moduleNameMapper,
  testEnvironment: 'node',
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
  setupFilesAfterEnv: ['<rootDir>/scripts/jest-fast-check.js'],
};

module.exports = {
  watchman: false,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{libs,services,apps,bench}/*/src/**/*.test.ts', '<rootDir>/bench/src/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,apps}/*/test/**/*.int.test.ts'],
      globalSetup: '<rootDir>/scripts/jest-servers-check.js',
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e.test.ts'],
      globalSetup: '<rootDir>/scripts/jest-servers-check.js',
    },
  ],
};
