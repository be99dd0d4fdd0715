/**
 * `ctxmesh ingest <dir>`: load a folder through the gateway's write path. Markdown and text
 * become resources, files under a `memories/<type>/` path become the user's memories,
 * code files become resources whose overview is their outline. Progress on stderr, a
 * summary at the end; a failure of one file never stops the others.
 */
import { opendir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { callGateway, GatewayError, type ClientOptions } from './http';

/** Directories never walked. */
const SKIP_DIRS = new Set(['.git', 'node_modules', 'dist', 'build', '.ctxmesh', '__pycache__', '.venv', 'target']);

/** Largest file ingested, in bytes. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

/** A file to ingest and where it goes. */
export interface IngestItem {
  /** Absolute path. */
  path: string;
  /** Target URI. */
  uri: string;
  /** Kind, for the summary. */
  kind: 'memory' | 'resource' | 'code';
}

const CODE_EXT = new Set(['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.py', '.go', '.rs', '.java', '.cs', '.cpp', '.cc', '.c', '.h', '.hpp', '.rb', '.php', '.sh']);

function extOf(p: string): string {
  const b = basename(p);
  const i = b.lastIndexOf('.');
  return i <= 0 ? '' : b.slice(i).toLowerCase();
}

/**
 * Map a path relative to the ingested folder to its URI:
 * `…/memories/<type>/<rest>` → `viking://user/{user}/memories/<type>/<rest>`; anything else →
 * `{prefix}/<rel>` (default prefix `viking://resources/<folder name>`).
 */
export function uriFor(rel: string, opts: { user: string; prefix: string }): { uri: string; kind: IngestItem['kind'] } {
  const parts = rel.split(sep).join('/').split('/').filter(Boolean);
  const mi = parts.indexOf('memories');
  const enc = (segs: string[]) => segs.map((s) => s.replace(/[\s#?]+/g, '-')).join('/');
  if (mi >= 0 && parts.length > mi + 2) {
    return { uri: `viking://user/${opts.user}/memories/${enc(parts.slice(mi + 1))}`, kind: 'memory' };
  }
  return { uri: `${opts.prefix.replace(/\/+$/, '')}/${enc(parts)}`, kind: CODE_EXT.has(extOf(rel)) ? 'code' : 'resource' };
}

/** Walk `dir` and plan the writes (skips hidden and build directories). */
export async function planIngest(dir: string, opts: { user: string; prefix?: string }): Promise<{ items: IngestItem[]; skipped: Array<{ path: string; reason: string }> }> {
  const prefix = opts.prefix ?? `viking://resources/${basename(dir.replace(/\/+$/, '')) || 'root'}`;
  const items: IngestItem[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  const walk = async (d: string): Promise<void> => {
    for await (const ent of await opendir(d)) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) {
        if (!SKIP_DIRS.has(ent.name) && !ent.name.startsWith('.')) await walk(p);
      } else if (ent.isFile()) {
        if (ent.name.startsWith('.') && ent.name !== '.abstract.md' && ent.name !== '.overview.md') continue;
        const s = await stat(p);
        if (s.size > MAX_FILE_BYTES) skipped.push({ path: p, reason: `larger than ${MAX_FILE_BYTES} bytes` });
        else items.push({ path: p, ...uriFor(relative(dir, p), { user: opts.user, prefix }) });
      }
    }
  };
  await walk(dir);
  items.sort((a, b) => a.uri.localeCompare(b.uri));
  return { items, skipped };
}

/** Outcome of an ingest run. */
export interface IngestSummary {
  files: number;
  written: number;
  unchanged: number;
  skipped: Array<{ path: string; reason: string }>;
  failed: Array<{ path: string; reason: string }>;
  byKind: Record<string, number>;
  bytes: number;
  seconds: number;
}

/** Progress callback: (done, total, current path). */
export type Progress = (done: number, total: number, current: string) => void;

/**
 * Writes in flight by default: the indexer applies what has arrived in batches (shared embedder
 * calls, one store write), so more writes in flight make larger, cheaper batches (measured on the
 * 2-core machine: 8 → 141 files/s, 32 → 184, 64 → 225, in-process bus, under load).
 */
export const DEFAULT_INGEST_CONCURRENCY = 32;

/**
 * Write every planned file, `concurrency` at a time, each waiting until indexed.
 * @param concurrency writes in flight @default DEFAULT_INGEST_CONCURRENCY
 */
export async function runIngest(items: IngestItem[], client: ClientOptions, onProgress: Progress, concurrency = DEFAULT_INGEST_CONCURRENCY): Promise<Omit<IngestSummary, 'skipped'>> {
  const started = Date.now();
  const out = { files: items.length, written: 0, unchanged: 0, failed: [] as Array<{ path: string; reason: string }>, byKind: {} as Record<string, number>, bytes: 0 };
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        const buf = await readFile(item.path);
        if (buf.includes(0)) throw new Error('binary file');
        const content = buf.toString('utf8');
        const res = await callGateway<{ status?: string; changed?: boolean }>(client, 'POST', '/api/v1/content/write', { uri: item.uri, content, mode: 'replace', wait: true });
        if (res?.changed === false) out.unchanged++;
        else out.written++;
        out.bytes += buf.length;
        out.byKind[item.kind] = (out.byKind[item.kind] ?? 0) + 1;
      } catch (err) {
        out.failed.push({ path: item.path, reason: err instanceof GatewayError ? `${err.status} ${err.code}: ${err.message}` : (err as Error).message });
      }
      onProgress(++done, items.length, item.path);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, items.length)) }, worker));
  return { ...out, seconds: (Date.now() - started) / 1000 };
}

/** Human summary of a run. */
export function formatSummary(s: IngestSummary): string {
  const lines = [
    `ingested ${s.written + s.unchanged}/${s.files} files in ${s.seconds.toFixed(1)} s (${(s.files / Math.max(s.seconds, 0.001)).toFixed(1)} files/s, ${(s.bytes / 1024).toFixed(0)} KiB)`,
    `  by kind: ${Object.entries(s.byKind).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
  ];
  if (s.unchanged) lines.push(`  unchanged (same content): ${s.unchanged}`);
  if (s.skipped.length) lines.push(`  skipped: ${s.skipped.length}`, ...s.skipped.slice(0, 10).map((x) => `    ${x.path}: ${x.reason}`));
  if (s.failed.length) lines.push(`  failed: ${s.failed.length}`, ...s.failed.slice(0, 20).map((x) => `    ${x.path}: ${x.reason}`));
  return lines.join('\n');
}
