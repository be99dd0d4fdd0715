/**
 * A small LRU of query embeddings. A context request runs each planned query against several
 * targets, and harnesses repeat the same prompt text across turns: each distinct text is
 * embedded once, concurrent requests for one text share a single embedding call, and the
 * texts missing from a batch go to the embedder in one call.
 */

/** Embeds a batch of texts (one vector per text, in order). */
export type EmbedBatch = (texts: string[]) => Promise<Float32Array[]>;

/** Default number of embeddings kept. */
export const DEFAULT_EMBED_CACHE_SIZE = 512;

/** LRU of embeddings keyed by exact text (one cache per embedder: vectors of two models never mix). */
export class EmbeddingCache {
  private readonly done = new Map<string, Float32Array>();
  private readonly inflight = new Map<string, Promise<Float32Array>>();
  /** Texts sent to the embedder so far (observability and tests). */
  embedded = 0;
  /** Embedder calls made so far. */
  calls = 0;

  /** @param capacity embeddings kept (0 disables keeping, in-flight sharing still applies) @default 512 */
  constructor(readonly capacity = DEFAULT_EMBED_CACHE_SIZE) {}

  /** Number of cached embeddings. */
  get size(): number {
    return this.done.size;
  }

  private remember(text: string, v: Float32Array): void {
    if (this.capacity <= 0) return;
    this.done.delete(text);
    this.done.set(text, v);
    while (this.done.size > this.capacity) {
      const oldest = this.done.keys().next().value as string;
      this.done.delete(oldest);
    }
  }

  /** Embed one text with `embed` (no in-flight sharing) and remember it. */
  private async embedOne(text: string, embed: EmbedBatch): Promise<Float32Array> {
    this.calls += 1;
    this.embedded += 1;
    const [v] = await embed([text]);
    if (!(v instanceof Float32Array)) throw new Error('embedder returned no vector');
    this.remember(text, v);
    return v;
  }

  /**
   * Embeddings of `texts` (duplicates allowed), in order. Cached texts are answered from the
   * cache (and refreshed as most recently used), texts being embedded by a concurrent call are
   * awaited (and embedded again with this caller's `embed` if that call fails), and the rest are
   * embedded in one `embed` call. A failed call is not cached.
   */
  async getMany(texts: readonly string[], embed: EmbedBatch): Promise<Float32Array[]> {
    const missing: string[] = [];
    const waits = new Map<string, Promise<Float32Array>>();
    const seen = new Set<string>();
    for (const t of texts) {
      if (seen.has(t)) continue;
      seen.add(t);
      const hit = this.done.get(t);
      if (hit) {
        this.remember(t, hit);
        waits.set(t, Promise.resolve(hit));
        continue;
      }
      const pending = this.inflight.get(t);
      if (pending) {
        // Another caller's embedding may fail for its own reasons (its deadline aborted it):
        // then embed the text once more under this caller's own call.
        waits.set(t, pending.catch(() => this.embedOne(t, embed)));
        continue;
      }
      missing.push(t);
    }
    if (missing.length > 0) {
      this.calls += 1;
      this.embedded += missing.length;
      const call = Promise.resolve().then(() => embed(missing));
      missing.forEach((t, i) => {
        const one = call.then((vs) => {
          const v = vs[i];
          if (!(v instanceof Float32Array)) throw new Error(`embedder returned ${vs.length} vectors for ${missing.length} texts`);
          return v;
        });
        this.inflight.set(t, one);
        waits.set(t, one);
        one.then(
          (v) => {
            this.inflight.delete(t);
            this.remember(t, v);
          },
          () => this.inflight.delete(t),
        );
      });
    }
    return Promise.all(texts.map((t) => waits.get(t) as Promise<Float32Array>));
  }
}
