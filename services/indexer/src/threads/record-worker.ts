/**
 * A record thread's entry (a `worker_threads` worker of {@link RecordPool}): builds the records of
 * documents (`buildRecords`: chunking, abstract, overview, the code outline) and embeds them with
 * the built-in lexical embedder, off the main thread's event loop.
 *
 * Each record also carries its `lexicalCounts` (the embedded index's term counts of its lexical
 * text), so the store's write on the main thread does not tokenise it again.
 *
 * Protocol (structured messages on the worker's port):
 * - in `workerData`: {@link RecordWorkerData};
 * - out, once: `{ type: 'ready', embedderId, outline }` (what it loaded), or `{ type: 'failed', message }`;
 * - in: `{ type: 'build', id, inputs }` → out: `{ type: 'built', id, results, vectors }`: one result
 *   per input in order (its records, or the error) and every record's vector, in the same order,
 *   packed in one transferred `Float32Array` (empty when the thread does not embed);
 * - in: `{ type: 'stop' }` → the thread ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LexicalEmbedder, lexicalTermCounts, type LexicalEmbedderOptions } from '@ctxmesh/embedder';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { loadOutline } from '@ctxmesh/outline';
import { buildRecords, type DocumentInput, type PendingRecord } from '../domain/records';

/** What the pool hands a record thread. */
export interface RecordWorkerData {
  /** Options of the lexical embedder to embed with; null: build records only. */
  embedder: LexicalEmbedderOptions | null;
  /** Load the code outliner (the main thread has one). */
  outline: boolean;
  /** Passage size limit, estimated tokens. */
  maxPassageTokens: number;
}

/** One input's result. */
export type RecordWorkerResult = { ok: true; records: PendingRecord[] } | { ok: false; name: string; message: string };

/** Messages the worker posts. */
export type RecordWorkerMessage =
  | { type: 'ready'; embedderId: string | null; outline: boolean }
  | { type: 'failed'; message: string }
  | { type: 'built'; id: number; results: RecordWorkerResult[]; vectors: Float32Array };

/** Messages the worker takes. */
export type RecordWorkerRequest = { type: 'build'; id: number; inputs: DocumentInput[] } | { type: 'stop' };

async function run(port: NonNullable<typeof parentPort>, data: RecordWorkerData): Promise<void> {
  let outliner: CodeOutliner | null = null;
  let embedder: LexicalEmbedder | null = null;
  try {
    embedder = data.embedder ? new LexicalEmbedder(data.embedder) : null;
    if (data.outline) outliner = await loadOutline();
  } catch (err) {
    port.postMessage({ type: 'failed', message: (err as Error)?.message ?? String(err) } satisfies RecordWorkerMessage);
    return;
  }
  port.on('message', (m: RecordWorkerRequest) => {
    if (m.type === 'stop') {
      port.close();
      return;
    }
    const vectors: Float32Array[] = [];
    const results = m.inputs.map((input): RecordWorkerResult => {
      try {
        const records = buildRecords(input, { outliner, maxPassageTokens: data.maxPassageTokens });
        if (embedder) vectors.push(...records.map((r) => embedder.embedOne(r.embedText)));
        // The store's lexical counts of the same text, counted here too (it indexes a blank lexicalText's abstract and body instead).
        for (const r of records) if (r.lexicalText.trim() !== '') r.lexicalCounts = lexicalTermCounts(r.lexicalText);
        return { ok: true, records };
      } catch (err) {
        return { ok: false, name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) };
      }
    });
    // One buffer for the whole reply: one transfer, and the receiver makes its own views of it.
    const packed = new Float32Array(vectors.length * (embedder?.dimension ?? 0));
    vectors.forEach((v, i) => packed.set(v, i * v.length));
    port.postMessage({ type: 'built', id: m.id, results, vectors: packed } satisfies RecordWorkerMessage, [packed.buffer]);
  });
  port.postMessage({ type: 'ready', embedderId: embedder?.id ?? null, outline: outliner !== null } satisfies RecordWorkerMessage);
}

if (parentPort) void run(parentPort, workerData as RecordWorkerData);
