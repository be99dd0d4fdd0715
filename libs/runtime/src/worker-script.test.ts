import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtWorkerScript } from './worker-script';

describe('builtWorkerScript', () => {
  let pkg: string;
  beforeEach(() => (pkg = mkdtempSync(join(tmpdir(), 'ctxmesh-worker-script-'))));
  afterEach(() => rmSync(pkg, { recursive: true, force: true }));

  it('finds the script beside a built module, else under dist/ for a source module, else null', () => {
    for (const d of ['src/threads', 'dist/threads']) mkdirSync(join(pkg, d), { recursive: true });
    writeFileSync(join(pkg, 'dist/threads/w.js'), '');
    writeFileSync(join(pkg, 'dist/top.js'), '');
    expect(builtWorkerScript(join(pkg, 'dist/threads'), 'threads', 'w.js')).toBe(join(pkg, 'dist/threads/w.js'));
    expect(builtWorkerScript(join(pkg, 'src/threads'), 'threads', 'w.js')).toBe(join(pkg, 'dist/threads/w.js'));
    expect(builtWorkerScript(join(pkg, 'src'), '', 'top.js')).toBe(join(pkg, 'dist/top.js'));
    expect(builtWorkerScript(join(pkg, 'src/threads'), 'threads', 'missing.js')).toBeNull();
  });
});
