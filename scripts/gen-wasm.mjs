#!/usr/bin/env node
// The WebAssembly kernel of libs/stores/src/embedded/simd-dot.ts is written as text in
// simd-dot.wat beside it. This assembles that text with wabt (a devDependency: the runtime
// never assembles) and writes the bytes (base64) into simd-dot.ts between the `gen:wasm` markers.
//   node scripts/gen-wasm.mjs           rewrite the bytes (`npm run gen:wasm`)
//   node scripts/gen-wasm.mjs --check   fail when the committed bytes are not the .wat's (`npm test`)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '..');
const watPath = join(root, 'libs/stores/src/embedded/simd-dot.wat');
const tsPath = join(root, 'libs/stores/src/embedded/simd-dot.ts');
const BEGIN = '// gen:wasm begin';
const END = '// gen:wasm end';

/** Assemble WebAssembly text to bytes (validated; no names section). */
async function assemble(name, text) {
  const wabt = await createRequire(import.meta.url)('wabt')();
  const mod = wabt.parseWat(name, text);
  try {
    mod.validate();
    return Uint8Array.from(mod.toBinary({ write_debug_names: false }).buffer);
  } finally {
    mod.destroy();
  }
}

/** The generated region: the bytes, base64 (one line: the .wat is what a reader reads). */
function render(bytes) {
  const b64 = Buffer.from(bytes).toString('base64');
  return `${BEGIN} (from simd-dot.wat by \`npm run gen:wasm\`; do not edit)\nconst KERNEL = Uint8Array.from(Buffer.from('${b64}', 'base64'));\n${END}`;
}

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const ts = readFileSync(tsPath, 'utf8');
const from = ts.indexOf(BEGIN);
const to = ts.indexOf(END);
if (from < 0 || to < from) {
  console.error(`${relative(root, tsPath)}: the '${BEGIN}' … '${END}' markers are missing`);
  process.exit(1);
}
const region = render(await assemble('simd-dot.wat', readFileSync(watPath, 'utf8')));
const next = ts.slice(0, from) + region + ts.slice(to + END.length);
if (values.check) {
  if (next !== ts) {
    console.error(`${relative(root, tsPath)}: the kernel bytes are not the assembly of simd-dot.wat; run \`npm run gen:wasm\` and commit`);
    process.exitCode = 1;
  } else {
    console.log('gen-wasm: the kernel bytes in simd-dot.ts match simd-dot.wat');
  }
} else if (next !== ts) {
  writeFileSync(tsPath, next);
  console.log(`gen-wasm: wrote the kernel bytes into ${relative(root, tsPath)}`);
} else {
  console.log('gen-wasm: up to date');
}
