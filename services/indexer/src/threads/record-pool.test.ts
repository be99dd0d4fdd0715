import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpEmbedder, LexicalEmbedder, lexicalTermCounts } from '@ctxmesh/embedder';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { loadOutline } from '@ctxmesh/outline';
import pino from 'pino';
import type { BuildOutcome, BuiltDocument } from '../domain/build';
import { RecordThreadError } from '../domain/errors';
import { buildRecords, type DocumentInput } from '../domain/records';
import { RecordPool, recordWorkerScript } from './record-pool';

const log = pino({ level: 'silent' });

function input(uri: string, content: string): DocumentInput {
  return { uri, content, account: 'acme', workspace: 'default', subject: '', tags: ['team=search'], validFrom: null, validTo: 1_900_000_000_000, createdAt: 1_000, updatedAt: 2_000, contentHash: `h-${uri}` };
}

function longMarkdown(): string {
  const parts = ['# Harbour operations', 'How the pilots board ships at dawn.'];
  for (let s = 0; s < 12; s++) {
    parts.push(`## Berth ${s}`, Array.from({ length: 120 }, (_, w) => `tide${(s * 7 + w) % 53} rope${w % 11}`).join(' '));
  }
  return parts.join('\n\n');
}

/** A memory, a long markdown guide (passages), code (the outliner's overview), Chinese text and both directory sidecars. */
const DOCS: DocumentInput[] = [
  input('viking://user/alice/memories/events/launch.md', '# Summary\nShipped the stdio MCP proxy.\n\n<!-- MEMORY_FIELDS {"k": 1} -->\n'),
  input('viking://resources/guides/harbour.md', longMarkdown()),
  input('viking://resources/src/retry.ts', 'export function retry(n: number): number {\n  // back off\n  return n * 2;\n}\nexport class Pilot { board(): void {} }\n'),
  input('viking://resources/zh/港口.md', '# 港口引航\n\n引航员在黎明登船，检查缆绳和潮汐。港口的调度系统记录每一次靠泊。'),
  input('viking://resources/guides/.abstract.md', 'Guides for the harbour crew.'),
  input('viking://resources/guides/.overview.md', '---\ntitle: guides\n---\nWhat the guides cover.'),
];

function fulfilled(o: BuildOutcome): BuiltDocument {
  if (o.status !== 'fulfilled') throw o.reason;
  return o.value;
}

/** A stand-in worker entry (plain JS) that follows the record worker's protocol. */
function fakeWorker(dir: string, body: string): string {
  const file = join(dir, `fake-${Math.random().toString(36).slice(2)}.js`);
  writeFileSync(file, `const { parentPort, workerData } = require('node:worker_threads');\n${body}\n`);
  return file;
}

describe('RecordPool', () => {
  let outliner: CodeOutliner | null;
  let dir: string;
  beforeAll(async () => {
    outliner = await loadOutline();
    dir = mkdtempSync(join(tmpdir(), 'record-pool-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds its built worker entry', () => {
    expect(recordWorkerScript()).toMatch(/dist[/\\]threads[/\\]record-worker\.js$/);
  });

  it('builds and embeds every kind of document exactly as the main thread does, across threads', async () => {
    const embedder = new LexicalEmbedder({ dimension: 256 });
    const pool = new RecordPool({ threads: 2, embedder, outliner, maxPassageTokens: 128, log });
    try {
      expect(pool.embeds).toBe(true);
      const out = await pool.build(DOCS);
      expect(out).toHaveLength(DOCS.length);
      DOCS.forEach((d, i) => {
        const built = fulfilled(out[i]!);
        const expected = buildRecords(d, { outliner, maxPassageTokens: 128 });
        // The store's lexical counts ride along (every record here has a lexical text).
        expect(built.records).toEqual(expected.map((r) => ({ ...r, lexicalCounts: lexicalTermCounts(r.lexicalText) })));
        expect(built.vectors).toEqual(expected.map((r) => embedder.embedOne(r.embedText)));
      });
      // The long guide was chunked, and the code file has the outliner's overview.
      expect(fulfilled(out[1]!).records.length).toBeGreaterThan(2);
      expect(fulfilled(out[2]!).records[0]!.overview).toContain('retry');
    } finally {
      await pool.close();
    }
  });

  it('builds records only, leaving the vectors to the main thread, for an embedder that is not the lexical one', async () => {
    const embedder = new HttpEmbedder({ url: 'http://127.0.0.1:9/v1/embeddings', model: 'm', dimension: 8 });
    const pool = new RecordPool({ threads: 1, embedder, outliner: null, maxPassageTokens: 512, log });
    try {
      expect(pool.embeds).toBe(false);
      const [one] = await pool.build([DOCS[0]!]);
      const records = buildRecords(DOCS[0]!, { outliner: null, maxPassageTokens: 512 }).map((r) => ({ ...r, lexicalCounts: lexicalTermCounts(r.lexicalText) }));
      expect(fulfilled(one!)).toEqual({ records, vectors: null });
    } finally {
      await pool.close();
    }
  });

  it('fails only the document that failed in the thread', async () => {
    const script = fakeWorker(
      dir,
      `parentPort.postMessage({ type: 'ready', embedderId: null, outline: false });
       parentPort.on('message', (m) => m.type === 'build' && parentPort.postMessage({ type: 'built', id: m.id,
         vectors: new Float32Array(0), results: m.inputs.map((d) => d.uri.includes('bad') ? { ok: false, name: 'RangeError', message: 'no' } : { ok: true, records: [] }) }));`,
    );
    const pool = new RecordPool({ threads: 1, embedder: new HttpEmbedder({ url: 'http://127.0.0.1:9', model: 'm', dimension: 8 }), outliner: null, maxPassageTokens: 512, log, script });
    try {
      const out = await pool.build([input('viking://resources/a.md', 'a'), input('viking://resources/bad.md', 'b'), input('viking://resources/c.md', 'c')]);
      expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const reason = (out[1] as PromiseRejectedResult).reason as RecordThreadError;
      expect(reason).toBeInstanceOf(RecordThreadError);
      expect(reason).toMatchObject({ name: 'RecordThreadError', remoteName: 'RangeError', message: 'RangeError: no' });
    } finally {
      await pool.close();
    }
  });

  it('fails the documents in flight when a thread dies, and starts another for the next build', async () => {
    const script = fakeWorker(
      dir,
      `parentPort.postMessage({ type: 'ready', embedderId: null, outline: false });
       parentPort.on('message', (m) => {
         if (m.type !== 'build') return;
         if (m.inputs.some((d) => d.uri.includes('crash'))) process.exit(3);
         parentPort.postMessage({ type: 'built', id: m.id, vectors: new Float32Array(0), results: m.inputs.map(() => ({ ok: true, records: [] })) });
       });`,
    );
    const pool = new RecordPool({ threads: 1, embedder: new HttpEmbedder({ url: 'http://127.0.0.1:9', model: 'm', dimension: 8 }), outliner: null, maxPassageTokens: 512, log, script });
    try {
      const crashed = await pool.build([input('viking://resources/crash.md', 'x'), input('viking://resources/b.md', 'y')]);
      expect(crashed.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect((crashed[0] as PromiseRejectedResult).reason).toBeInstanceOf(RecordThreadError);
      const next = await pool.build([input('viking://resources/b.md', 'y')]);
      expect(next.map((o) => o.status)).toEqual(['fulfilled']);
    } finally {
      await pool.close();
    }
  });

  it('builds in process, and starts no more threads, when a thread fails before it is ready', async () => {
    const script = fakeWorker(dir, `require('fs').appendFileSync(${JSON.stringify(join(dir, 'starts'))}, 'x'); throw new Error('cannot load');`);
    const pool = new RecordPool({ threads: 1, embedder: new LexicalEmbedder({ dimension: 256 }), outliner: null, maxPassageTokens: 512, log, script });
    try {
      for (let i = 0; i < 3; i++) {
        const [built] = await pool.build([DOCS[0]!]);
        expect(fulfilled(built!)).toEqual({ records: buildRecords(DOCS[0]!, { outliner: null, maxPassageTokens: 512 }), vectors: null });
      }
      expect(readFileSync(join(dir, 'starts'), 'utf8')).toBe('x');
    } finally {
      await pool.close();
    }
  });

  it('builds in process when a thread cannot reproduce the main thread (another embedder, no outliner, no entry)', async () => {
    const embedder = new LexicalEmbedder({ dimension: 256 });
    const other = fakeWorker(dir, `parentPort.postMessage({ type: 'ready', embedderId: 'lexical-v1-d512', outline: false });`);
    const noOutline = fakeWorker(dir, `parentPort.postMessage({ type: 'ready', embedderId: 'lexical-v1-d256', outline: false });`);
    for (const [script, withOutliner] of [
      [other, false],
      [noOutline, true],
      [null, false],
    ] as const) {
      const o = withOutliner ? outliner : null;
      const pool = new RecordPool({ threads: 1, embedder, outliner: o, maxPassageTokens: 512, log, script });
      try {
        const [built] = await pool.build([DOCS[2]!]);
        // The main thread's records, without vectors: the applier embeds them itself.
        expect(fulfilled(built!)).toEqual({ records: buildRecords(DOCS[2]!, { outliner: o, maxPassageTokens: 512 }), vectors: null });
      } finally {
        await pool.close();
      }
    }
  });
});
