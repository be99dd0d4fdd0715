#!/usr/bin/env node
// Fails when libs/proto/src/gen is stale: lints the protos, regenerates into a temporary
// directory with the same template and compares byte for byte.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const buf = join(root, 'node_modules/.bin/buf');
const protoDir = join(root, 'proto');
const committed = join(root, 'libs/proto/src/gen');
const out = mkdtempSync(join(tmpdir(), 'ctxmesh-gen-'));

function files(dir) {
  const acc = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else acc.push(relative(dir, p));
    }
  };
  walk(dir);
  return acc.sort();
}

try {
  execFileSync(buf, ['lint'], { cwd: protoDir, stdio: 'inherit' });
  const template = readFileSync(join(protoDir, 'buf.gen.yaml'), 'utf8').replace(/out: .*/, `out: ${out}`);
  execFileSync(buf, ['generate', '--template', template], { cwd: protoDir, stdio: 'inherit' });
  const want = files(out);
  const have = files(committed);
  const problems = [];
  for (const f of want) if (!have.includes(f)) problems.push(`missing: ${f}`);
  for (const f of have) if (!want.includes(f)) problems.push(`not generated (hand-written or stale): ${f}`);
  for (const f of want) {
    if (have.includes(f) && readFileSync(join(out, f), 'utf8') !== readFileSync(join(committed, f), 'utf8')) problems.push(`differs: ${f}`);
  }
  if (problems.length > 0) {
    console.error(`libs/proto/src/gen is stale; run \`npm run gen\` and commit:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  } else {
    console.log(`gen-check: ${want.length} generated files up to date`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
