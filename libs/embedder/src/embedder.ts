/** Per-call options of {@link Embedder.embed}. */
export interface EmbedOptions {
  /** Aborts the call (the caller's deadline or cancellation); local embedders may ignore it. */
  signal?: AbortSignal;
}

/** An embedding model: turns texts into fixed-dimension dense vectors. */
export interface Embedder {
  /** Stable identifier of the model and its parameters; vectors from different ids are not comparable. */
  readonly id: string;
  /** Length of every returned vector. */
  readonly dimension: number;
  /** True when the model can embed images (false for text-only models). */
  readonly supportsImages: boolean;
  /**
   * Embed a batch of texts.
   * @returns one vector per input, in input order, each of length `dimension`
   */
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;
}

/** Cosine similarity of two equal-length vectors (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`dimension mismatch: ${a.length} vs ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Scale `v` in place to unit L2 norm (a zero vector is left as is). @returns `v` */
export function l2normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  if (n > 0) {
    const inv = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i] *= inv;
  }
  return v;
}
