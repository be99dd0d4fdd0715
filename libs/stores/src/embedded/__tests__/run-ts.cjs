// Runs a TypeScript file of this repository in a child node process, compiled by @swc/core the
// way jest compiles the tests (jest.config.js), with `@ctxmesh/<lib>` resolved to its src/:
// what a test's child process needs to run the code under test rather than a stale build.
// Compiled files are kept in the temp directory by a hash of their source, so a test that starts
// many children loads the compiler (≈ 0.2 s) only once.
//   node run-ts.cjs <file.ts> [args…]   (the file sees its args from process.argv[2] on)
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');

const cacheDir = path.join(os.tmpdir(), 'ctxmesh-run-ts');

const root = path.resolve(__dirname, '../../../../..');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const lib = /^@ctxmesh\/([a-z-]+)$/.exec(request);
  const local = lib && fs.existsSync(path.join(root, 'libs', lib[1], 'src', 'index.ts'));
  return resolve.call(this, local ? path.join(root, 'libs', lib[1], 'src', 'index.ts') : request, ...rest);
};
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const cached = path.join(cacheDir, `${crypto.createHash('sha256').update(filename).update('\0').update(source).digest('hex')}.js`);
  let code;
  try {
    code = fs.readFileSync(cached, 'utf8');
  } catch {
    code = require('@swc/core').transformSync(source, {
      filename,
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
      module: { type: 'commonjs' },
    }).code;
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written whole then renamed, so a child killed meanwhile never leaves half a file.
    const tmp = `${cached}.${process.pid}`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  }
  module._compile(code, filename);
};

const file = path.resolve(process.argv[2]);
process.argv.splice(1, 1);
require(file);
