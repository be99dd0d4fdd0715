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
        const scales = new Float32Array(cap);
        scales.set(this.scale8);
        this.scale8 = scales;
      }
    } else {
      const next = new Float32Array(cap * this.dim);
      next.set(this.js);
      this.js = next;
    }
    this.capacity = cap;
  }

  /** Write `v` as row `slot` (must be < capacity). */
  set(slot: number, v: Float32Array): void {
    if (this.wasm) this.f32.set(v, ROWS_AT / 4 + slot * this.dim);
    else this.js.set(v, slot * this.dim);
    if (this.wasm8) this.scale8[slot] = quantize8(v, this.i8, ROWS8_AT + slot * this.dim);
  }

  /** True when {@link approxDots} scans the int8 copy (else it is {@link dots}, exact). */
  get quantized(): boolean {
    return this.wasm8 !== null;
  }

  /**
   * Approximate dot products of `q` with rows `[lo, hi)` from the int8 copies of both, written
   * to `out[lo..hi)`. For unit vectors the error is a few thousandths: enough to pick the
   * candidates of a top-k that {@link dot} then scores exactly. Exact ({@link dots}) where the
   * int8 kernel is unavailable.
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
