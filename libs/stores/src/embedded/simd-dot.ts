/**
 * Row-major float32 vector storage with a batched dot product, computed by a tiny hand-assembled
 * WebAssembly SIMD kernel (f32x4): about seven times faster than a JavaScript loop, which is what
 * lets the embedded index scan 100,000 vectors exactly within a request budget. Falls back to a
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

/** Unsigned LEB128. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (small constants only). */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/**
 * The module: memory 0 exported as `mem`, and
 * `dots(q, base, rows, dim, out)`: for r < rows, `out[r] = Σ_j base[r·dim + j] · q[j]`
 * (byte addresses; `dim` a multiple of 4).
 */
function kernelBytes(): Uint8Array {
  const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
  const name = (s: string): number[] => [...uleb(s.length), ...Array.from(Buffer.from(s, 'utf8'))];
  const get = (i: number): number[] => [0x20, i];
  const set = (i: number): number[] => [0x21, i];
  const i32 = (n: number): number[] => [0x41, ...sleb(n)];
  const simd = (op: number): number[] => [0xfd, ...uleb(op)];
  // params: 0 q, 1 base, 2 rows, 3 dim, 4 out; locals: 5 r, 6 j (bytes), 7 row pointer, 8 acc (v128), 9 row bytes
  const body = [
    ...get(3), ...i32(2), 0x74, ...set(9), // rowBytes = dim << 2
    ...get(1), ...set(7),
    ...i32(0), ...set(5),
    0x02, 0x40, 0x03, 0x40, // block loop
    ...get(5), ...get(2), 0x4f, 0x0d, 1, // r >= rows → break
    ...simd(0x0c), ...new Array<number>(16).fill(0), ...set(8), // acc = 0
    ...i32(0), ...set(6),
    0x02, 0x40, 0x03, 0x40,
    ...get(6), ...get(9), 0x4f, 0x0d, 1, // j >= rowBytes → break
    ...get(8),
    ...get(7), ...get(6), 0x6a, ...simd(0x00), 0x02, 0x00, // v128.load row[j]
    ...get(0), ...get(6), 0x6a, ...simd(0x00), 0x02, 0x00, // v128.load q[j]
    ...simd(0xe6), ...simd(0xe4), ...set(8), // acc += row * q
    ...get(6), ...i32(16), 0x6a, ...set(6),
    0x0c, 0, 0x0b, 0x0b, // br loop; end loop; end block
    ...get(4),
    ...get(8), ...simd(0x1f), 0,
    ...get(8), ...simd(0x1f), 1, 0x92,
    ...get(8), ...simd(0x1f), 2, 0x92,
    ...get(8), ...simd(0x1f), 3, 0x92,
    0x38, 0x02, 0x00, // f32.store out
    ...get(4), ...i32(4), 0x6a, ...set(4),
    ...get(7), ...get(9), 0x6a, ...set(7),
    ...get(5), ...i32(1), 0x6a, ...set(5),
    0x0c, 0, 0x0b, 0x0b,
    0x0b,
  ];
  const fn = [3, 3, 0x7f, 1, 0x7b, 1, 0x7f, ...body];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0x00, 1]),
    ...section(7, [2, ...name('mem'), 0x02, 0, ...name('dots'), 0x00, 0]),
    ...section(10, [1, ...uleb(fn.length), ...fn]),
  ]);
}

let compiled: object | null | undefined;

/** The compiled kernel, or null when this runtime lacks WebAssembly SIMD. */
function kernelModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = WA ? new WA.Module(kernelBytes()) : null;
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

/**
 * Growable row-major store of float32 vectors of one dimension, with {@link dots}.
 * Rows are addressed by slot; capacity doubles as rows are added.
 */
export class VectorRows {
  private readonly wasm: { mem: WasmMemory; dots: (q: number, base: number, rows: number, dim: number, out: number) => void } | null;
  private js: Float32Array;
  private f32!: Float32Array;
  private capacity = 0;

  /** @param simd use the WebAssembly kernel when available; @default true */
  constructor(
    readonly dim: number,
    simd = true,
  ) {
    const mod = simd && dim % 4 === 0 && dim * 4 <= Q_BYTES ? kernelModule() : null;
    if (mod && WA) {
      const inst = new WA.Instance(mod, {});
      this.wasm = inst.exports as unknown as VectorRows['wasm'] & object;
      this.js = new Float32Array(0);
    } else {
      this.wasm = null;
      this.js = new Float32Array(0);
    }
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
