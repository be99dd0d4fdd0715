/**
 * Row-major float32 vector storage with a batched dot product, computed by a tiny WebAssembly
 * SIMD kernel (f32x4, source in `simd-dot.wat`): about seven times faster than a JavaScript
 * loop, which is what lets the embedded index scan 100,000 vectors exactly within a request
 * budget. Falls back to a
 * JavaScript loop where WebAssembly SIMD is unavailable or the dimension is not a multiple of 4.
 */

/** The slice of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

/**
 * The module, assembled from `simd-dot.wat` beside this file (its source, with comments):
 * memory 0 exported as `mem`, and `dots(q, base, rows, dim, out)`: for r < rows,
 * `out[r] = Σ_j base[r·dim + j] · q[j]` (byte addresses; `dim` a multiple of 4).
 * `npm run gen:wasm` writes the bytes below and `npm test` checks that they match the text.
 */
// gen:wasm begin (from simd-dot.wat by `npm run gen:wasm`; do not edit)
const KERNEL = Uint8Array.from(Buffer.from('AGFzbQEAAAABCQFgBX9/f39/AAMDAgAABQMBAAEHFgMDbWVtAgAEZG90cwAABWRvdHM4AAEK4AICoQEDA38BewF/IANBAnQhCSABIQdBACEFAkADQCAFIAJPDQH9DAAAAAAAAAAAAAAAAAAAAAAhCEEAIQYCQANAIAYgCU8NASAIIAcgBmr9AAIAIAAgBmr9AAIA/eYB/eQBIQggBkEQaiEGDAALCyAEIAj9HwAgCP0fAZIgCP0fApIgCP0fA5I4AgAgBEEEaiEEIAcgCWohByAFQQFqIQUMAAsLC7oBAgN/A3sgASEHQQAhBQJAA0AgBSACTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQhBACEGAkADQCAGIANPDQEgByAGav0AAAAhCSAAIAZq/QAAACEKIAggCf2HASAK/YcB/boB/a4BIQggCCAJ/YgBIAr9iAH9ugH9rgEhCCAGQRBqIQYMAAsLIAQgCP0bACAI/RsBaiAI/RsCIAj9GwNqajYCACAEQQRqIQQgByADaiEHIAVBAWohBQwACwsL', 'base64'));
// gen:wasm end

let compiled: object | null | undefined;

/** The compiled kernel, or null when this runtime lacks WebAssembly SIMD. */
function kernelModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = WA ? new WA.Module(KERNEL) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const PAGE = 65536;
/** Bytes reserved for the query vector (dimension ≤ 4096). */
const Q_BYTES = 16384;
/** Rows scored per kernel call (the output area holds this many floats). */
const OUT_ROWS = 4096;
const ROWS_AT = Q_BYTES + OUT_ROWS * 4;

/** Bytes reserved for the int8 query in the quantised copy's memory. */
const Q8_BYTES = 4096;
const ROWS8_AT = Q8_BYTES + OUT_ROWS * 4;

type Kernel = { mem: WasmMemory; dots: (q: number, base: number, rows: number, dim: number, out: number) => void; dots8: (q: number, base: number, rows: number, dim: number, out: number) => void };

/**
 * Symmetric int8 quantisation of `v` into `out` (each component × 127 / max |component|,
 * rounded). @returns the factor that turns an integer dot product back into this vector's
 * share of the float one (max |component| / 127; 0 for a zero vector)
 */
export function quantize8(v: ArrayLike<number>, out: Int8Array, at = 0): number {
  let m = 0;
  for (let i = 0; i < v.length; i++) m = Math.max(m, Math.abs(v[i]!));
  if (!(m > 0) || !Number.isFinite(m)) {
    out.fill(0, at, at + v.length);
    return 0;
  }
  const k = 127 / m;
  for (let i = 0; i < v.length; i++) out[at + i] = Math.round(v[i]! * k);
  return m / 127;
}

/** `x` plus a relative margin that covers its float32 rounding and the float64 roundings that computed it. */
function up(x: number): number {
  return x * (1 + 2 ** -20);
}

function grown(a: Float32Array, n: number): Float32Array<ArrayBuffer> {
  const b = new Float32Array(n);
  b.set(a.subarray(0, Math.min(a.length, n)));
  return b;
}

/**
 * Growable row-major store of float32 vectors of one dimension, with {@link dots}, and an int8
 * copy of every row for {@link approxDots}: a scan that reads a quarter of the bytes (a scan
 * of many rows is bound by memory, not arithmetic), for picking candidates that are then
 * scored exactly. Rows are addressed by slot; capacity doubles as rows are added.
 */
export class VectorRows {
  private readonly wasm: Kernel | null;
  /** The int8 copy's instance (its own memory), when the dimension suits its kernel. */
  private readonly wasm8: Kernel | null;
  private js: Float32Array;
  private f32!: Float32Array;
  private i8!: Int8Array;
  /** Per row: the factor of its int8 copy (see {@link quantize8}). */
  private scale8 = new Float32Array(0);
  /** Per row: its Euclidean norm, rounded up (see {@link approxBound}). */
  private norms = new Float32Array(0);
  /** Per row: the Euclidean norm of its int8 copy's residual (row − factor × int8 row), rounded up. */
  private resid8 = new Float32Array(0);
  /** The largest of {@link norms} and of {@link resid8} ever written (an overwritten row leaves them high, still bounds). */
  private maxNorm = 0;
  private maxResid8 = 0;
  private capacity = 0;

  /** @param simd use the WebAssembly kernel when available; @default true */
  constructor(
    readonly dim: number,
    simd = true,
  ) {
    const mod = simd && dim % 4 === 0 && dim * 4 <= Q_BYTES ? kernelModule() : null;
    this.js = new Float32Array(0);
    this.wasm = mod && WA ? (new WA.Instance(mod, {}).exports as unknown as Kernel) : null;
    this.wasm8 = mod && WA && dim % 16 === 0 && dim <= Q8_BYTES ? (new WA.Instance(mod, {}).exports as unknown as Kernel) : null;
    // Small at first: a file may hold many small accounts, each with its own shard.
    this.ensure(32);
  }

  /** True when the SIMD kernel is in use. */
  get accelerated(): boolean {
    return this.wasm !== null;
  }

  /** Make room for `rows` rows. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    let cap = Math.max(32, this.capacity);
    while (cap < rows) cap *= 2;
    if (this.wasm) {
      const need = ROWS_AT + cap * this.dim * 4;
      const have = this.wasm.mem.buffer.byteLength;
      if (need > have) this.wasm.mem.grow(Math.ceil((need - have) / PAGE));
      // grow() detaches the old buffer: views must be recreated.
      this.f32 = new Float32Array(this.wasm.mem.buffer);
      if (this.wasm8) {
        const need8 = ROWS8_AT + cap * this.dim;
        const have8 = this.wasm8.mem.buffer.byteLength;
        if (need8 > have8) this.wasm8.mem.grow(Math.ceil((need8 - have8) / PAGE));
        this.i8 = new Int8Array(this.wasm8.mem.buffer);
        this.scale8 = grown(this.scale8, cap);
        this.resid8 = grown(this.resid8, cap);
      }
    } else {
      const next = new Float32Array(cap * this.dim);
      next.set(this.js);
      this.js = next;
    }
    this.norms = grown(this.norms, cap);
    this.capacity = cap;
  }

  /** Write `v` as row `slot` (must be < capacity). */
  set(slot: number, v: Float32Array): void {
    if (this.wasm) this.f32.set(v, ROWS_AT / 4 + slot * this.dim);
    else this.js.set(v, slot * this.dim);
    let n2 = 0;
    for (let i = 0; i < v.length; i++) n2 += v[i]! * v[i]!;
    this.norms[slot] = up(Math.sqrt(n2));
    this.maxNorm = Math.max(this.maxNorm, this.norms[slot]!);
    if (this.wasm8) {
      const at = ROWS8_AT + slot * this.dim;
      // The factor as stored (float32) is the one the scan multiplies by, so the residual is taken against it.
      this.scale8[slot] = quantize8(v, this.i8, at);
      const f = this.scale8[slot]!;
      let r2 = 0;
      for (let i = 0; i < v.length; i++) {
        const r = v[i]! - f * this.i8[at + i]!;
        r2 += r * r;
      }
      this.resid8[slot] = up(Math.sqrt(r2));
      this.maxResid8 = Math.max(this.maxResid8, this.resid8[slot]!);
    }
  }

  /**
   * A rigorous bound on |{@link approxDots}(q)[slot] − {@link dot}(q, slot)| for every row, for
   * picking candidates that provably hold the exact top k.
   *
   * With the int8 copies, write q = s_q·a + δ (a the query's int8 copy, s_q its factor) and
   * row r = s_r·b + ε (likewise, s_r the stored factor). Then, exactly,
   * q·r = s_q·s_r·(a·b) + s_r·(δ·b) + q·ε, and by Cauchy–Schwarz
   * |q·r − s_q·s_r·(a·b)| ≤ ‖δ‖·‖s_r·b‖ + ‖q‖·‖ε‖ ≤ ‖δ‖·(‖r‖ + ‖ε‖) + ‖q‖·‖ε‖,
   * where ‖ε‖ and ‖r‖ are kept per row (computed when the row is written) and ‖δ‖ is computed
   * here. The integer dot product a·b is exact; the scaling back is a few float32/float64
   * roundings (relative 2⁻²² covers them, on |s_q·s_r·(a·b)| ≤ (‖q‖ + ‖δ‖)(‖r‖ + ‖ε‖)). The f32
   * kernel's sums (no int8 copy) are within (dim + 4)·2⁻²³·‖q‖·‖r‖ of the exact ones (float32
   * accumulation of dim products, then the lanes). {@link dot} itself accumulates in float64:
   * its own error (below dim·2⁻⁵³·‖q‖·‖r‖) is covered by an absolute 1e-9.
   * @returns `at(slot)`, the bound of one row, and `max`, a bound over all rows
   */
  approxBound(q: Float32Array): { max: number; at(slot: number): number } {
    let q2 = 0;
    for (let i = 0; i < q.length; i++) q2 += q[i]! * q[i]!;
    const qn = up(Math.sqrt(q2));
    const f32 = (this.dim + 4) * 2 ** -23 * qn;
    if (!this.wasm8) {
      const norms = this.norms;
      return { max: f32 * this.maxNorm + 1e-9, at: (slot) => f32 * norms[slot]! + 1e-9 };
    }
    const a = new Int8Array(q.length);
    const sq = quantize8(q, a);
    let d2 = 0;
    for (let i = 0; i < q.length; i++) {
      const d = q[i]! - sq * a[i]!;
      d2 += d * d;
    }
    const qd = up(Math.sqrt(d2));
    const norms = this.norms;
    const resid = this.resid8;
    // Also bounds an f32-kernel scan (dots), which callers may hand in instead.
    const of = (n: number, e: number): number => up(qd * (n + e) + qn * e + 2 ** -22 * (qn + qd) * (n + e) + f32 * n) + 1e-9;
    return { max: of(this.maxNorm, this.maxResid8), at: (slot) => of(norms[slot]!, resid[slot]!) };
  }

  /** True when {@link approxDots} scans the int8 copy (else it is {@link dots}, exact). */
  get quantized(): boolean {
    return this.wasm8 !== null;
  }

  /**
   * Approximate dot products of `q` with rows `[lo, hi)` from the int8 copies of both, written
   * to `out[lo..hi)`. For unit vectors the error is a few thousandths, and {@link approxBound}
   * bounds it per row: enough to pick the candidates of a top-k that {@link dot} then scores
   * exactly. The f32 kernel's {@link dots} where the int8 kernel is unavailable.
   */
  approxDots(q: Float32Array, lo: number, hi: number, out: Float32Array): void {
    const k8 = this.wasm8;
    if (!k8) {
      this.dots(q, lo, hi, out);
      return;
    }
    const d = this.dim;
    const qScale = quantize8(q, this.i8, 0);
    const res = new Int32Array(k8.mem.buffer, Q8_BYTES, OUT_ROWS);
    const scales = this.scale8;
    for (let start = lo; start < hi; start += OUT_ROWS) {
      const n = Math.min(OUT_ROWS, hi - start);
      k8.dots8(0, ROWS8_AT + start * d, n, d, Q8_BYTES);
      for (let i = 0; i < n; i++) out[start + i] = res[i]! * qScale * scales[start + i]!;
    }
  }

  /** Copy of row `slot`. */
  get(slot: number): Float32Array {
    const at = (this.wasm ? ROWS_AT / 4 : 0) + slot * this.dim;
    return (this.wasm ? this.f32 : this.js).slice(at, at + this.dim);
  }

  /** Dot product of `q` with row `slot`, in JavaScript (for a few scattered rows, where a kernel call per row costs more). */
  dot(q: Float32Array, slot: number): number {
    const d = this.dim;
    const at = (this.wasm ? ROWS_AT / 4 : 0) + slot * d;
    const m = this.wasm ? this.f32 : this.js;
    let s = 0;
    for (let j = 0; j < d; j++) s += m[at + j]! * q[j]!;
    return s;
  }

  /** Dot products of `q` with rows `[lo, hi)`, written to `out[lo..hi)`. */
  dots(q: Float32Array, lo: number, hi: number, out: Float32Array): void {
    const d = this.dim;
    if (this.wasm) {
      const f = this.f32;
      f.set(q, 0);
      for (let start = lo; start < hi; start += OUT_ROWS) {
        const n = Math.min(OUT_ROWS, hi - start);
        this.wasm.dots(0, ROWS_AT + start * d * 4, n, d, Q_BYTES);
        out.set(f.subarray(Q_BYTES / 4, Q_BYTES / 4 + n), start);
      }
      return;
    }
    const m = this.js;
    for (let r = lo; r < hi; r++) {
      const off = r * d;
      let a0 = 0;
      let a1 = 0;
      let j = 0;
      for (; j + 1 < d; j += 2) {
        a0 += m[off + j] * q[j];
        a1 += m[off + j + 1] * q[j + 1];
      }
      if (j < d) a0 += m[off + j] * q[j];
      out[r] = a0 + a1;
    }
  }
}
