/** The gateway's package version, reported by `GET /health`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Version from this package's `package.json` (read at run time: `src/` under jest and `dist/`
 * after a build both sit next to it).
 * @returns the version, or `"0.0.0"` when the file cannot be read
 */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
