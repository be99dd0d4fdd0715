/**
 * The record threads: a {@link RecordBuilder} that builds documents' records — and embeds them,
 * when the indexer's embedder is the built-in lexical one — in `worker_threads` workers
 * (`record-worker.ts`), so the CPU of chunking, overviews, outlines and embedding leaves the
 * event loop that serves HTTP, the bus and the store's writes.
 *
 * A thread reproduces the main thread's work exactly: the same `buildRecords`, the same passage
 * limit, its own code outliner when the indexer has one, and a lexical embedder built from the
 * indexer's embedder's options — it reports the embedder id it built and whether its outliner
 * loaded, and the pool uses it only when both match (else it builds in process, and says so once
 * in the log). Any other embedder (an embeddings endpoint: I/O, not CPU) stays on the main
 * thread: the threads then build records only.
 *
 * Threads start on the first build (an idle indexer costs no thread) and never keep the process
 * alive. A thread that stops with documents in flight fails those documents (the writes are
 * retried, as after any transient failure) and is replaced at the next build.
 */
import { Worker } from 'node:worker_threads';
import { LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { builtWorkerScript } from '@ctxmesh/runtime';
import type { Logger } from 'pino';
import { InProcessBuilder, type BuildOutcome, type RecordBuilder } from '../domain/build';
import { RecordThreadError } from '../domain/errors';
import type { DocumentInput } from '../domain/records';
import type { RecordWorkerData, RecordWorkerMessage, RecordWorkerRequest, RecordWorkerResult } from './record-worker';

export { RecordThreadError };

/** The compiled worker entry: beside this module in `dist/` (under the ts sources, the built one). */
export function recordWorkerScript(): string | null {
  return builtWorkerScript(__dirname, 'threads', 'record-worker.js');
}

/** Options of a {@link RecordPool}. */
export interface RecordPoolOptions {
  /** Threads (at least 1). */
  threads: number;
  /** The indexer's embedder: the threads embed only when it is a {@link LexicalEmbedder}. */
  embedder: Embedder;
  /** The indexer's code outliner (null: none; the threads then load none either). */
  outliner: CodeOutliner | null;
  /** Passage size limit, estimated tokens (the applier's). */
  maxPassageTokens: number;
  log: Logger;
  /** The worker entry. @default {@link recordWorkerScript} */
  script?: string | null;
}

/** A thread's reply to one build. */
interface Reply {
  results: RecordWorkerResult[];
  /** Every record's vector, packed in result order (empty when the threads do not embed). */
  vectors: Float32Array;
}

interface Waiter {
  resolve: (reply: Reply) => void;
  reject: (err: Error) => void;
}

/** One thread: its worker, whether it started as asked, and the builds it has in flight. */
interface Slot {
  worker: Worker;
  ready: Promise<boolean>;
  waiting: Map<number, Waiter>;
  /** Characters in flight (where the next documents go). */
  load: number;
  gone: boolean;
}

/** Builds records in worker threads (see the module comment). */
export class RecordPool implements RecordBuilder {
  private readonly slots: Slot[] = [];
  private readonly fallback: InProcessBuilder;
  private readonly data: RecordWorkerData;
  private readonly embedderId: string | null;
  private readonly script: string | null;
  private next = 0;
  private unusable: string | null = null;
  private closed = false;

  constructor(private readonly opts: RecordPoolOptions) {
    this.fallback = new InProcessBuilder({ outliner: opts.outliner, maxPassageTokens: opts.maxPassageTokens });
    const lexical = opts.embedder instanceof LexicalEmbedder ? opts.embedder : null;
    this.embedderId = lexical?.id ?? null;
    this.data = { embedder: lexical?.options ?? null, outline: opts.outliner !== null, maxPassageTokens: opts.maxPassageTokens };
    this.script = opts.script === undefined ? recordWorkerScript() : opts.script;
    if (this.script === null) this.giveUp('the record thread entry is not built (run npm run build)');
  }

  /** Whether the threads embed (the built documents come with their vectors). */
  get embeds(): boolean {
    return this.embedderId !== null;
  }

  /**
   * Build each input's records in the threads (in process when they cannot be used).
   * @returns per input, in order: its records (and vectors when the threads embed), or its error
   */
  async build(inputs: readonly DocumentInput[]): Promise<BuildOutcome[]> {
    if (inputs.length === 0) return [];
    const slots = await this.live();
    if (slots === null) return this.fallback.build(inputs);
    // Largest documents first, each to the thread with the least in flight.
    const parts = slots.map(() => ({ idx: [] as number[], chars: 0 }));
    const order = inputs.map((_, i) => i).sort((a, b) => inputs[b]!.content.length - inputs[a]!.content.length);
    for (const i of order) {
      let best = 0;
      for (let s = 1; s < slots.length; s++) if (slots[s]!.load + parts[s]!.chars < slots[best]!.load + parts[best]!.chars) best = s;
      parts[best]!.idx.push(i);
      parts[best]!.chars += inputs[i]!.content.length + 1;
    }
    const out = new Array<BuildOutcome>(inputs.length);
    await Promise.all(
      parts.map(async (part, s) => {
        if (part.idx.length === 0) return;
        part.idx.sort((a, b) => a - b);
        try {
          const reply = await this.send(slots[s]!, part.idx.map((i) => inputs[i]!), part.chars);
          const dim = this.opts.embedder.dimension;
          let at = 0;
          part.idx.forEach((i, n) => {
            const r = reply.results[n]!;
            if (!r.ok) {
              out[i] = { status: 'rejected', reason: new RecordThreadError(`${r.name}: ${r.message}`, r.name) };
              return;
            }
            // Views made here, on the buffer the thread handed over (no copy, and of this realm).
            const vectors = this.embeds ? r.records.map(() => new Float32Array(reply.vectors.buffer, reply.vectors.byteOffset + 4 * dim * at++, dim)) : null;
            out[i] = { status: 'fulfilled', value: { records: r.records, vectors } };
          });
        } catch (err) {
          for (const i of part.idx) out[i] = { status: 'rejected', reason: err };
        }
      }),
    );
    return out;
  }

  /** End every thread (builds in flight fail). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.splice(0).map((s) => this.end(s)));
  }

  /** The started threads (starting the missing ones), or null when builds run in process. */
  private async live(): Promise<Slot[] | null> {
    if (this.unusable !== null || this.closed) return null;
    for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i]!.gone) this.slots.splice(i, 1);
    while (this.slots.length < Math.max(1, this.opts.threads)) this.slots.push(this.spawn());
    const ok = await Promise.all(this.slots.map((s) => s.ready));
    if (ok.every(Boolean)) return [...this.slots];
    // A thread that could not do the main thread's work exactly: build here from now on.
    await Promise.all(this.slots.splice(0).map((s) => this.end(s)));
    return null;
  }

  private spawn(): Slot {
    const worker = new Worker(this.script!, { workerData: this.data });
    worker.unref();
    const slot: Slot = { worker, ready: Promise.resolve(false), waiting: new Map(), load: 0, gone: false };
    let started = false;
    const stopped = (why: string) => {
      if (slot.gone) return;
      slot.gone = true;
      const err = new RecordThreadError(`the record thread stopped (${why}) with ${slot.waiting.size} build(s) in flight`);
      for (const w of slot.waiting.values()) w.reject(err);
      slot.waiting.clear();
      // One that never started (an entry that cannot load) would fail again: build here instead.
      if (!started) this.giveUp(`the record thread did not start: ${why}`);
      else if (!this.closed) this.opts.log.warn({ why }, 'a record thread stopped; the next build starts another');
    };
    slot.ready = new Promise<boolean>((resolve) => {
      worker.on('message', (m: RecordWorkerMessage) => {
        if (m.type === 'ready') {
          started = true;
          if (m.embedderId !== this.embedderId) this.giveUp(`the record thread built embedder ${m.embedderId}, not ${this.embedderId}`);
          else if (m.outline !== this.data.outline) this.giveUp('the record thread could not load the code outliner');
          resolve(this.unusable === null);
        } else if (m.type === 'failed') {
          this.giveUp(`the record thread did not start: ${m.message}`);
          resolve(false);
        } else if (m.type === 'built') {
          const w = slot.waiting.get(m.id);
          slot.waiting.delete(m.id);
          w?.resolve({ results: m.results, vectors: m.vectors });
        }
      });
      worker.on('error', (err) => {
        stopped(err.message);
        resolve(false);
      });
      worker.on('exit', (code) => {
        stopped(`exit code ${code}`);
        resolve(false);
      });
    });
    return slot;
  }

  private send(slot: Slot, inputs: DocumentInput[], chars: number): Promise<Reply> {
    if (slot.gone) return Promise.reject(new RecordThreadError('the record thread stopped'));
    const id = ++this.next;
    slot.load += chars;
    return new Promise<Reply>((resolve, reject) => {
      slot.waiting.set(id, { resolve, reject });
      slot.worker.postMessage({ type: 'build', id, inputs } satisfies RecordWorkerRequest);
    }).finally(() => {
      slot.load -= chars;
    });
  }

  private async end(slot: Slot): Promise<void> {
    slot.gone = true;
    for (const w of slot.waiting.values()) w.reject(new RecordThreadError('the record threads were closed'));
    slot.waiting.clear();
    await slot.worker.terminate().catch(() => undefined);
  }

  private giveUp(why: string): void {
    if (this.unusable !== null) return;
    this.unusable = why;
    this.opts.log.warn({ why }, 'records are built on the main thread');
  }
}
