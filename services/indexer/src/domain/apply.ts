/**
 * Applying a validated write to the vector index: replace / create / append / delete, each
 * idempotent, each atomic through the store's `replaceDocument` / `deleteDocument`.
 *
 * Idempotence: every version carries a hash ({@link versionHash}); a write whose version is
 * already stored changes nothing (and skips embedding). An append's version names its write
 * id, so a redelivered append that already landed is recognised and not appended twice.
 * Atomicity: records are built and embedded first; the store swaps the document in one step,
 * so a failure before that leaves the old version searchable and nothing half-written.
 * Batches ({@link Applier.applyBatch}): the writes' current versions are read together, their
 * records are built together (by the {@link RecordBuilder}: in process, or in the record threads,
 * which also embed them), every text still without a vector is embedded in shared embedder
 * calls, and the documents are swapped in one store write (`replaceDocuments`: one transaction
 * on the embedded index); when that fails, each write is applied again on its own, so one bad
 * write fails alone.
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import type { Embedder } from '@ctxmesh/embedder';
import type { NodeRecord, VectorIndex, Visibility } from '@ctxmesh/stores';
import { MAX_PASSAGE_TOKENS } from './chunk';
import { RECORD_SCHEMA_VERSION, versionHash, type VersionInput } from './hash';
import { InProcessBuilder, type BuiltDocument, type RecordBuilder } from './build';
import type { DocumentInput } from './records';
import type { ValidWrite } from './write';
import { ApplyAbortedError } from './errors';

export { ApplyAbortedError };

/** Outcome of one write. */
export interface ApplyResult {
  /** `applied` (now indexed, or already was) or `failed` (a final refusal, e.g. ALREADY_EXISTS). */
  status: 'applied' | 'failed';
  /** Version hash of the indexed document ("" for deletes and failures). */
  contentHash: string;
  /** Points written (document + passages), or removed for a delete; 0 when nothing changed. */
  nodes: number;
  /** True when the store changed. */
  changed: boolean;
  /** Failure reason, e.g. `ALREADY_EXISTS`. */
  reason?: string;
  /** Failure message. */
  message?: string;
}

/** A write prepared up to its records: decided already, or the document to build, embed and store. */
type Prepared = { kind: 'done'; result: ApplyResult } | { kind: 'build'; uri: string; hash: string; input: DocumentInput };

/** Per write of a batch: its result, or the error that failed it (retry that write). */
export type BatchOutcome = PromiseSettledResult<ApplyResult>;

/** True when one of two URIs of an account is the other or lies under it (their writes do not commute). */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** Dependencies and limits of an {@link Applier}. */
export interface ApplierOptions {
  /** The vector index written to. */
  index: VectorIndex;
  /** Embedder of document and passage texts (its dimension must match the index). */
  embedder: Embedder;
  /** Code outliner for code overviews; absent or null → none. */
  outliner?: CodeOutliner | null;
  /** Texts per embedder call. @default 64 */
  embedBatchSize?: number;
  /** Passage size limit, estimated tokens. @default 512 */
  maxPassageTokens?: number;
  /** Clock, ms since epoch. @default Date.now */
  now?: () => number;
  /**
   * Builds (and, when it can, embeds) the records of the documents written; it must use the same
   * outliner and passage limit as this applier. @default an {@link InProcessBuilder} of
   * `outliner` and `maxPassageTokens`
   */
  builder?: RecordBuilder;
}

/**
 * Applies writes. Writes of one node — (account, URI): the account is not part of a URI, so
 * two accounts' `viking://resources/a.md` are two nodes — run one at a time in call order (the
 * bus already orders them; this also orders the synchronous ApplyWrite RPC against the bus).
 * Every store call names the write's account. Store and embedder errors propagate unchanged:
 * the caller decides to retry.
 */
export class Applier {
  private readonly index: VectorIndex;
  private readonly embedder: Embedder;
  private readonly outliner: CodeOutliner | null;
  private readonly builder: RecordBuilder;
  private readonly batch: number;
  private readonly maxPassageTokens: number;
  private readonly now: () => number;
  private readonly layout: string;
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(opts: ApplierOptions) {
    if (opts.embedder.dimension !== opts.index.dimension) {
      throw new RangeError(`embedder dimension ${opts.embedder.dimension} does not match the index dimension ${opts.index.dimension}`);
    }
    this.index = opts.index;
    this.embedder = opts.embedder;
    this.outliner = opts.outliner ?? null;
    this.batch = Math.max(1, opts.embedBatchSize ?? 64);
    this.maxPassageTokens = opts.maxPassageTokens ?? MAX_PASSAGE_TOKENS;
    this.now = opts.now ?? Date.now;
    this.layout = `v${RECORD_SCHEMA_VERSION}:p${this.maxPassageTokens}:o${this.outliner ? 1 : 0}`;
    this.builder = opts.builder ?? new InProcessBuilder({ outliner: this.outliner, maxPassageTokens: this.maxPassageTokens });
  }

  /**
   * Apply one write, after any earlier write of the same (account, URI) has finished.
   * @param signal aborts embedding (the ApplyWrite caller's deadline); ignored once storing began
   * @throws whatever the store or the embedder throws (transient: retry), or ApplyAbortedError
   */
  apply(w: ValidWrite, signal?: AbortSignal): Promise<ApplyResult> {
    const key = `${w.account}\u0000${w.uri}`;
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(
      () => this.applyNow(w, signal),
      () => this.applyNow(w, signal),
    );
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /**
   * Apply a batch of writes: after any earlier write of their nodes has finished, their stored
   * versions are read together, every text is embedded in shared embedder calls (of
   * `embedBatchSize`), and the changed documents are swapped in one `replaceDocuments` call.
   * Deletes, and writes whose URI overlaps (is, contains or lies under) an earlier write's of the
   * batch, are applied on their own, the overlapping ones after the batch in batch order. When
   * the shared embedding or the store write fails, each of those writes is applied again on its
   * own, so a bad write fails alone and the others land.
   * @returns per write, in order: its result, or the error that failed it (retry that write)
   */
  applyBatch(ws: readonly ValidWrite[]): Promise<BatchOutcome[]> {
    const keys = [...new Set(ws.map((w) => `${w.account}\u0000${w.uri}`))];
    const prev = Promise.all(keys.map((k) => this.tails.get(k)));
    const run = prev.then(() => this.applyBatchNow(ws));
    const tail = run.catch(() => undefined);
    for (const key of keys) {
      this.tails.set(key, tail);
      void tail.then(() => {
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
    }
    return run;
  }

  private async applyBatchNow(ws: readonly ValidWrite[]): Promise<BatchOutcome[]> {
    const out = new Array<BatchOutcome>(ws.length);
    const settleOne = async (i: number): Promise<void> => {
      try {
        out[i] = { status: 'fulfilled', value: await this.applyNow(ws[i]!, undefined) };
      } catch (err) {
        out[i] = { status: 'rejected', reason: err };
      }
    };
    // Which writes go in the shared store write: not a delete, and not overlapping an earlier one.
    const together: number[] = [];
    const alone: number[] = [];
    const later: number[] = [];
    ws.forEach((w, i) => {
      if (ws.some((e, j) => j < i && e.account === w.account && overlaps(e.uri, w.uri))) later.push(i);
      else if (w.kind === 'delete') alone.push(i);
      else together.push(i);
    });
    const prepared = new Map<number, Prepared>();
    try {
      const existing = await this.readExisting(together.map((i) => ws[i]!));
      await Promise.all(
        together.map(async (i, n) => {
          try {
            prepared.set(i, await this.prepare(ws[i]!, existing[n] ?? null));
          } catch (err) {
            out[i] = { status: 'rejected', reason: err };
          }
        }),
      );
    } catch {
      // The shared read failed: each write reads for itself below.
    }
    let toBuild = together.filter((i) => prepared.get(i)?.kind === 'build');
    for (const i of together) {
      const p = prepared.get(i);
      if (p?.kind === 'done') out[i] = { status: 'fulfilled', value: p.result };
    }
    const batchWrite = async (): Promise<void> => {
      if (toBuild.length === 0) return;
      const built = await this.builder.build(toBuild.map((i) => (prepared.get(i) as Extract<Prepared, { kind: 'build' }>).input));
      // A document that could not be built fails alone, as a failed prepare does.
      toBuild = toBuild.filter((i, n) => {
        const b = built[n]!;
        if (b.status === 'rejected') out[i] = { status: 'rejected', reason: b.reason };
        return b.status === 'fulfilled';
      });
      const docsBuilt = built.flatMap((b) => (b.status === 'fulfilled' ? [b.value] : []));
      if (toBuild.length === 0) return;
      const preps = toBuild.map((i) => prepared.get(i) as Extract<Prepared, { kind: 'build' }>);
      const records = await this.withVectors(docsBuilt, undefined);
      const docs = preps.map((p, n) => ({ docUri: p.uri, records: records[n]! }));
      const changed = await this.index.replaceDocuments(docs);
      toBuild.forEach((i, n) => {
        const p = preps[n]!;
        out[i] = { status: 'fulfilled', value: { status: 'applied', contentHash: p.hash, nodes: changed[n] ? docs[n]!.records.length : 0, changed: changed[n]! } };
      });
    };
    const unread = together.filter((i) => out[i] === undefined && !prepared.has(i));
    await Promise.all([
      batchWrite().catch(async (err: unknown) => {
        // A batch of one failed as that write: trying it again alone would only repeat it.
        if (toBuild.length === 1) out[toBuild[0]!] = { status: 'rejected', reason: err };
        else await Promise.all(toBuild.map(settleOne));
      }),
      ...unread.map(settleOne),
      ...alone.map(settleOne),
    ]);
    for (const i of later) await settleOne(i);
    return out;
  }

  /** The stored document point of each write's URI (null where none), read per account in one call. */
  private async readExisting(ws: readonly ValidWrite[]): Promise<Array<NodeRecord | null>> {
    const out = new Array<NodeRecord | null>(ws.length).fill(null);
    const byAccount = new Map<string, number[]>();
    ws.forEach((w, i) => {
      const list = byAccount.get(w.account);
      if (list) list.push(i);
      else byAccount.set(w.account, [i]);
    });
    await Promise.all(
      [...byAccount.values()].map(async (idx) => {
        const found = await this.index.get(
          idx.map((i) => ws[i]!.uri),
          this.visibility(ws[idx[0]!]!),
          'full',
        );
        idx.forEach((i, n) => (out[i] = (found[n] ?? null) as NodeRecord | null));
      }),
    );
    return out;
  }

  private visibility(w: Pick<ValidWrite, 'account'>): Visibility {
    // The indexer sees the whole account: every owner, every peer, every workspace.
    return { account: w.account, user: '', actorPeer: null, openPeers: true, allUsers: true, workspace: null };
  }

  private versionOf(w: ValidWrite, content: string, appendWriteId?: string): VersionInput {
    return {
      content,
      ...ownershipOf(w),
      embedderId: this.embedder.id,
      layout: this.layout,
      appendWriteId,
    };
  }

  private async applyNow(w: ValidWrite, signal: AbortSignal | undefined): Promise<ApplyResult> {
    if (w.kind === 'delete') {
      const removed = await this.index.deleteDocument(w.account, w.uri, { subtree: true });
      return { status: 'applied', contentHash: '', nodes: removed, changed: removed > 0 };
    }
    const [found] = await this.index.get([w.uri], this.visibility(w), 'full');
    const p = await this.prepare(w, (found ?? null) as NodeRecord | null);
    if (p.kind === 'done') return p.result;
    const [built] = await this.builder.build([p.input]);
    if (built!.status === 'rejected') throw built!.reason;
    if (signal?.aborted) throw new ApplyAbortedError(signal.reason);
    const [records] = await this.withVectors([built!.value], signal);
    const changed = await this.index.replaceDocument(w.uri, records!);
    return { status: 'applied', contentHash: p.hash, nodes: changed ? records.length : 0, changed };
  }

  /**
   * Decide a (non-delete) write against the stored document point `existing`: already applied,
   * refused (create on an existing node), or the document to build, embed and store.
   */
  private async prepare(w: ValidWrite, existing: NodeRecord | null): Promise<Prepared> {
    let content = w.content;
    let hash: string;
    if (w.kind === 'append') {
      if (existing !== null) {
        // Redelivered after it landed: the stored version is exactly this append's result.
        if (existing.contentHash === versionHash(this.versionOf(w, existing.body, w.writeId))) {
          return { kind: 'done', result: { status: 'applied', contentHash: existing.contentHash, nodes: 0, changed: false } };
        }
        content = existing.body + w.content;
      }
      hash = versionHash(this.versionOf(w, content, w.writeId));
    } else {
      hash = versionHash(this.versionOf(w, content));
      if (existing !== null && existing.contentHash === hash) {
        // The same version again (a repeat, or a create redelivered after it landed).
        return { kind: 'done', result: { status: 'applied', contentHash: hash, nodes: 0, changed: false } };
      }
      if (w.kind === 'create' && (existing !== null || (await this.index.exists(w.uri, this.visibility(w))))) {
        return { kind: 'done', result: { status: 'failed', contentHash: '', nodes: 0, changed: false, reason: 'ALREADY_EXISTS', message: `${w.uri} already exists` } };
      }
    }

    const now = this.now();
    const input: DocumentInput = {
      uri: w.uri,
      content,
      ...ownershipOf(w),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      contentHash: hash,
    };
    return { kind: 'build', uri: w.uri, hash, input };
  }

  /**
   * The built documents' records with their vectors: the builder's, else embedded here — every
   * text still without one in shared embedder calls.
   */
  private async withVectors(docs: readonly BuiltDocument[], signal: AbortSignal | undefined): Promise<NodeRecord[][]> {
    const vectors = await this.embed(
      docs.flatMap((d) => (d.vectors === null ? d.records.map((r) => r.embedText) : [])),
      signal,
    );
    let at = 0;
    return docs.map((d) => {
      const own = d.vectors;
      return d.records.map(({ embedText: _text, ...r }, i) => ({ ...r, vector: own === null ? vectors[at++]! : own[i]! }));
    });
  }

  private async embed(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batch) {
      if (signal?.aborted) throw new ApplyAbortedError(signal.reason);
      const part = await this.embedder.embed(texts.slice(i, i + this.batch), { signal });
      if (part.length !== Math.min(this.batch, texts.length - i)) throw new Error(`embedder returned ${part.length} vectors for ${Math.min(this.batch, texts.length - i)} texts`);
      out.push(...part);
    }
    return out;
  }
}

/** What a write says of its document beside its content: whose it is, its tags and validity (a stored version and the document built from it carry the same). */
function ownershipOf(w: ValidWrite): Pick<DocumentInput, 'account' | 'workspace' | 'subject' | 'tags' | 'validFrom' | 'validTo'> {
  return { account: w.account, workspace: w.workspace, subject: w.subject, tags: w.tags, validFrom: w.validFrom, validTo: w.validTo };
}
