/**
 * Where the compiled entry of a worker thread is: a package's worker scripts are built to
 * `dist/`, while its tests may run the TypeScript sources under `src/`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The built script `file` of a worker: beside the calling module (`moduleDir`, its `__dirname`)
 * when that is the built one, else the same place under the package's `dist/` (`subdir` is the
 * module's folder below `src/`, `''` for `src/` itself), or null when neither exists.
 */
export function builtWorkerScript(moduleDir: string, subdir: string, file: string): string | null {
  const here = join(moduleDir, file);
  if (existsSync(here)) return here;
  const depth = subdir === '' ? 1 : subdir.split('/').length + 1;
  const built = join(moduleDir, ...Array<string>(depth).fill('..'), 'dist', subdir, file);
  return existsSync(built) ? built : null;
}
