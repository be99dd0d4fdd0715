// Run a TypeScript file of this suite with plain Node (used by latency.ts, which is a script,
// not a test): `.ts` is compiled by swc on load, as jest does, and `@ctxmesh/<pkg>` resolves
// to `libs|services|apps/<pkg>/src/index.ts`, as jest's moduleNameMapper does, so no build
// is needed.  Usage: node test/e2e/contract/run-ts.cjs test/e2e/contract/latency.ts [args]
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '../../..');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolve(request, parent, ...rest) {
  const m = /^@ctxmesh\/([^/]+)$/.exec(request);
  if (m) {
    for (const dir of ['libs', 'services', 'apps']) {
      const candidate = path.join(root, dir, m[1], 'src', 'index.ts');
      if (fs.existsSync(candidate)) return candidate;
    }
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function compile(module, filename) {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

const script = process.argv[2];
if (!script) {
  console.error('usage: node test/e2e/contract/run-ts.cjs <file.ts> [args]');
  process.exit(2);
}
process.argv.splice(1, 1);
require(path.resolve(script));
