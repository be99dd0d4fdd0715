/**
 * Applying a validated write to the vector index: replace / create / append / delete, each
 * idempotent, each atomic through the store's `replaceDocument` / `deleteDocument`.
 *
 * Idempotence: every version carries a hash ({@link versionHash}); a write whose version is
 * already stored changes nothing (and skips embedding). An append's version names its write
 * id, so a redelivered append that already landed is recognised and not appended twice.
 * Atomicity: records are built and embedded first; the store swaps the document in one step,
 * so a failure before that leaves the old version searchable and nothing half-written.
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import type { Embedder } from '@ctxmesh/embedder';
import type { NodeRecord, VectorIndex, Visibility } from '@ctxmesh/stores';
import { MAX_PASSAGE_TOKENS } from './chunk';
import { RECORD_SCHEMA_VERSION, versionHash, type VersionInput } from './hash';
import { buildRecords } from './records';
import type { ValidWrite } from './write';

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
}

/** The caller's signal fired while a write was being prepared (nothing was written). */
export class ApplyAbortedError extends Error {
  constructor(cause: unknown) {
    super('write aborted before it was stored', { cause });
    this.name = 'ApplyAbortedError';
  }
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

  private visibility(w: ValidWrite): Visibility {
    // The indexer sees the whole account: every owner, every peer, every workspace.
    return { account: w.account, user: '', actorPeer: null, openPeers: true, allUsers: true, workspace: null };
  }

  private versionOf(w: ValidWrite, content: string, appendWriteId?: string): VersionInput {
    return {
      content,
      account: w.account,
      workspace: w.workspace,
      subject: w.subject,
      tags: w.tags,
      validFrom: w.validFrom,
      validTo: w.validTo,
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
    const vis = this.visibility(w);
    const [found] = await this.index.get([w.uri], vis, 'full');
    const existing = (found ?? null) as NodeRecord | null;

    let content = w.content;
    let hash: string;
    if (w.kind === 'append') {
      if (existing !== null) {
        // Redelivered after it landed: the stored version is exactly this append's result.
        if (existing.contentHash === versionHash(this.versionOf(w, existing.body, w.writeId))) {
          return { status: 'applied', contentHash: existing.contentHash, nodes: 0, changed: false };
        }
        content = existing.body + w.content;
      }
      hash = versionHash(this.versionOf(w, content, w.writeId));
    } else {
      hash = versionHash(this.versionOf(w, content));
      if (existing !== null && existing.contentHash === hash) {
        // The same version again (a repeat, or a create redelivered after it landed).
        return { status: 'applied', contentHash: hash, nodes: 0, changed: false };
      }
      if (w.kind === 'create' && (existing !== null || (await this.index.exists(w.uri, vis)))) {
        return { status: 'failed', contentHash: '', nodes: 0, changed: false, reason: 'ALREADY_EXISTS', message: `${w.uri} already exists` };
      }
    }

    const now = this.now();
    const pending = buildRecords(
      {
        uri: w.uri,
        content,
        account: w.account,
        workspace: w.workspace,
        subject: w.subject,
        tags: w.tags,
        validFrom: w.validFrom,
        validTo: w.validTo,
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
        contentHash: hash,
      },
      { outliner: this.outliner, maxPassageTokens: this.maxPassageTokens },
    );
    const vectors = await this.embed(
      pending.map((p) => p.embedText),
      signal,
    );
    const records: NodeRecord[] = pending.map(({ embedText: _text, ...r }, i) => ({ ...r, vector: vectors[i]! }));
    const changed = await this.index.replaceDocument(w.uri, records);
    return { status: 'applied', contentHash: hash, nodes: changed ? records.length : 0, changed };
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
