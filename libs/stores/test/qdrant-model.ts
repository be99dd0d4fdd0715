/**
 * An in-memory model of the slice of Qdrant's REST API the adapter uses, written from Qdrant's
 * documented semantics (filters, named dense + sparse vectors with the IDF modifier, the query
 * API with prefetches fused by RRF or re-scored by a vector query, retrieval by id, scroll,
 * exact count, facets on indexed fields — one count per distinct value of a point —, batch
 * updates). It is a test double:
 * it lets the adapter-neutral contract suite exercise the adapter's *composition* of requests
 * (filters, replace protocol, calibration) offline. It proves nothing about Qdrant itself — that
 * is what running the same suite with QDRANT_URL is for.
 */
type Json = unknown;
type Payload = Record<string, unknown>;

interface Point {
  id: string;
  payload: Payload;
  dense: Map<string, number[]>;
  sparse: Map<string, Map<number, number>>;
}

interface Collection {
  vectors: Record<string, { size: number; distance: string }>;
  sparse: Record<string, { modifier?: string }>;
  indexes: Set<string>;
  points: Map<string, Point>;
}

/** A Qdrant-style error the fake server turns into a non-2xx answer. */
export class ModelError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
const list = (x: unknown): unknown[] => (x === undefined || x === null ? [] : Array.isArray(x) ? x : [x]);

function values(p: Payload, key: string): unknown[] {
  const v = p[key];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function fieldCondition(p: Payload, c: Record<string, unknown>): boolean {
  const key = String(c.key);
  const vs = values(p, key);
  if (c.match) {
    const m = obj(c.match);
    if ('value' in m) return vs.some((v) => v === m.value);
    if ('any' in m) return vs.some((v) => (m.any as unknown[]).includes(v));
    if ('except' in m) return !vs.some((v) => (m.except as unknown[]).includes(v));
    throw new ModelError(400, `unsupported match ${JSON.stringify(m)}`);
  }
  if (c.range) {
    const r = obj(c.range);
    return vs.some(
      (v) =>
        typeof v === 'number' &&
        (r.gte === undefined || r.gte === null || v >= (r.gte as number)) &&
        (r.gt === undefined || r.gt === null || v > (r.gt as number)) &&
        (r.lte === undefined || r.lte === null || v <= (r.lte as number)) &&
        (r.lt === undefined || r.lt === null || v < (r.lt as number)),
    );
  }
  throw new ModelError(400, `unsupported field condition ${JSON.stringify(c)}`);
}

function condition(p: Point, c: unknown): boolean {
  const o = obj(c);
  if ('key' in o) return fieldCondition(p.payload, o);
  if ('is_empty' in o) return values(p.payload, String(obj(o.is_empty).key)).length === 0;
  if ('is_null' in o) return p.payload[String(obj(o.is_null).key)] === null;
  if ('has_id' in o) return (o.has_id as unknown[]).map(String).includes(p.id);
  if ('must' in o || 'should' in o || 'must_not' in o) return matches(p, o);
  throw new ModelError(400, `unsupported condition ${JSON.stringify(c)}`);
}

/** Qdrant filter semantics: every `must`, at least one `should` when any is given, no `must_not`. */
export function matches(p: Point, filter: unknown): boolean {
  if (filter === undefined || filter === null) return true;
  const f = obj(filter);
  const must = list(f.must);
  const should = list(f.should);
  const mustNot = list(f.must_not);
  return must.every((c) => condition(p, c)) && (should.length === 0 || should.some((c) => condition(p, c))) && !mustNot.some((c) => condition(p, c));
}

function normalize(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return n > 0 ? v.map((x) => x / n) : v;
}

function selectPayload(p: Payload, sel: unknown): Payload | undefined {
  if (sel === false || sel === undefined || sel === null) return undefined;
  if (sel === true) return { ...p };
  if (Array.isArray(sel)) return Object.fromEntries(Object.entries(p).filter(([k]) => sel.includes(k)));
  const o = obj(sel);
  if (Array.isArray(o.include)) return Object.fromEntries(Object.entries(p).filter(([k]) => (o.include as string[]).includes(k)));
  if (Array.isArray(o.exclude)) return Object.fromEntries(Object.entries(p).filter(([k]) => !(o.exclude as string[]).includes(k)));
  throw new ModelError(400, `unsupported payload selector ${JSON.stringify(sel)}`);
}

function selectVector(p: Point, sel: unknown): Json {
  if (sel === false || sel === undefined || sel === null) return undefined;
  const names = sel === true ? [...p.dense.keys()] : (sel as string[]);
  const out: Record<string, Json> = {};
  for (const n of names) if (p.dense.has(n)) out[n] = p.dense.get(n);
  return out;
}

/** The fusion a query names (`{fusion: "rrf"}` or `{rrf: {…}}`), or null for a vector query. */
function fusionOf(query: unknown): string | null {
  const o = obj(query);
  if ('rrf' in o || o.fusion === 'rrf') return 'rrf';
  if ('fusion' in o) throw new ModelError(400, `unsupported fusion ${JSON.stringify(query)}`);
  return null;
}

interface Scored {
  point: Point;
  score: number;
}

/** The model: one map of collections, one method per REST route. */
export class QdrantModel {
  private readonly collections = new Map<string, Collection>();

  private col(name: string): Collection {
    const c = this.collections.get(name);
    if (!c) throw new ModelError(404, `Collection \`${name}\` doesn't exist!`);
    return c;
  }

  /** Route one request; returns the `result` member of Qdrant's answer. */
  handle(method: string, path: string, body: Json): Json {
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) throw new ModelError(404, `no route ${method} ${path}`);
    const name = decodeURIComponent(m[1]!);
    const rest = m[2] ?? '';
    const b = obj(body);
    switch (`${method} ${rest}`) {
      case 'GET /exists':
        return { exists: this.collections.has(name) };
      case 'PUT ':
        if (this.collections.has(name)) throw new ModelError(409, `Collection \`${name}\` already exists!`);
        this.collections.set(name, {
          vectors: obj(b.vectors) as Collection['vectors'],
          sparse: obj(b.sparse_vectors) as Collection['sparse'],
          indexes: new Set(),
          points: new Map(),
        });
        return true;
      case 'DELETE ':
        return this.collections.delete(name);
      case 'GET ': {
        const c = this.col(name);
        return {
          status: 'green',
          points_count: c.points.size,
          config: { params: { vectors: c.vectors, sparse_vectors: c.sparse } },
          payload_schema: Object.fromEntries([...c.indexes].map((k) => [k, { data_type: 'keyword', points: 0 }])),
        };
      }
      case 'PUT /index':
        this.col(name).indexes.add(String(b.field_name));
        return { operation_id: 0, status: 'completed' };
      case 'PUT /points':
        this.upsert(this.col(name), b);
        return { operation_id: 0, status: 'completed' };
      case 'POST /points/batch':
        return list(b.operations).map((op) => {
          this.apply(this.col(name), obj(op));
          return { operation_id: 0, status: 'completed' };
        });
      case 'POST /points/delete':
        this.delete(this.col(name), b);
        return { operation_id: 0, status: 'completed' };
      case 'POST /points/count':
        return { count: [...this.col(name).points.values()].filter((p) => matches(p, b.filter)).length };
      case 'POST /points/scroll':
        return this.scroll(this.col(name), b);
      case 'POST /points':
        return list(b.ids)
          .map((id) => this.col(name).points.get(String(id)))
          .filter((p): p is Point => !!p)
          .map((p) => ({ id: p.id, payload: selectPayload(p.payload, b.with_payload), vector: selectVector(p, b.with_vector) }));
      case 'POST /points/query/batch':
        return list(b.searches).map((s) => ({ points: this.query(this.col(name), obj(s)) }));
      case 'POST /facet':
        return this.facet(this.col(name), b);
      default:
        throw new ModelError(404, `no route ${method} ${path}`);
    }
  }

  private upsert(c: Collection, b: Record<string, unknown>): void {
    for (const raw of list(b.points)) {
      const pt = obj(raw);
      const dense = new Map<string, number[]>();
      const sparse = new Map<string, Map<number, number>>();
      for (const [k, v] of Object.entries(obj(pt.vector))) {
        if (Array.isArray(v)) {
          const spec = c.vectors[k];
          if (!spec) throw new ModelError(400, `Wrong input: Not existing vector name: ${k}`);
          if (v.length !== spec.size) throw new ModelError(400, `Wrong input: Vector dimension error: expected dim: ${spec.size}, got ${v.length}`);
          dense.set(k, spec.distance === 'Cosine' ? normalize(v as number[]) : (v as number[]));
        } else {
          if (!c.sparse[k]) throw new ModelError(400, `Wrong input: Not existing sparse vector name: ${k}`);
          const sv = obj(v);
          const idx = sv.indices as number[];
          if (new Set(idx).size !== idx.length) throw new ModelError(400, 'Sparse vector indices must be unique');
          sparse.set(k, new Map(idx.map((i, j) => [i, (sv.values as number[])[j]!])));
        }
      }
      const id = String(pt.id);
      c.points.set(id, { id, payload: { ...obj(pt.payload) }, dense, sparse });
    }
  }

  private selected(c: Collection, b: Record<string, unknown>): Point[] {
    if (Array.isArray(b.points)) return b.points.map((id) => c.points.get(String(id))).filter((p): p is Point => !!p);
    return [...c.points.values()].filter((p) => matches(p, b.filter));
  }

  private delete(c: Collection, b: Record<string, unknown>): void {
    for (const p of this.selected(c, b)) c.points.delete(p.id);
  }

  private apply(c: Collection, op: Record<string, unknown>): void {
    if (op.upsert) this.upsert(c, obj(op.upsert));
    else if (op.delete) this.delete(c, obj(op.delete));
    else if (op.set_payload) {
      const sp = obj(op.set_payload);
      for (const p of this.selected(c, sp)) Object.assign(p.payload, obj(sp.payload));
    } else throw new ModelError(400, `unsupported operation ${JSON.stringify(op)}`);
  }

  private scroll(c: Collection, b: Record<string, unknown>): Json {
    const limit = typeof b.limit === 'number' ? b.limit : 10;
    const all = [...c.points.values()].filter((p) => matches(p, b.filter)).sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    const start = b.offset === undefined || b.offset === null ? 0 : all.findIndex((p) => p.id >= String(b.offset));
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const next = start >= 0 && start + limit < all.length ? all[start + limit]!.id : null;
    return {
      points: page.map((p) => ({ id: p.id, payload: selectPayload(p.payload, b.with_payload), vector: selectVector(p, b.with_vector) })),
      next_page_offset: next,
    };
  }

  private facet(c: Collection, b: Record<string, unknown>): Json {
    // Qdrant facets only a field with a payload index.
    if (!c.indexes.has(String(b.key))) throw new ModelError(400, `Bad request: Index required but not found for "${String(b.key)}"`);
    const counts = new Map<unknown, number>();
    for (const p of c.points.values()) {
      if (!matches(p, b.filter)) continue;
      for (const v of new Set(values(p.payload, String(b.key)))) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const limit = typeof b.limit === 'number' ? b.limit : 10;
    return { hits: [...counts].sort((x, y) => y[1] - x[1]).slice(0, limit).map(([value, count]) => ({ value, count })) };
  }

  /**
   * One query (or prefetch). Without prefetches: nearest dense, or sparse with IDF, over the
   * points its filter admits. With prefetches, the main query applies to their results
   * (Qdrant's Query API: "perform the prefetch queries, apply the main query over their
   * results"): RRF fuses them, a vector query re-scores their union.
   */
  private run(c: Collection, q: Record<string, unknown>, outerFilter: unknown): Scored[] {
    const limit = typeof q.limit === 'number' ? q.limit : 10;
    const filter = q.filter ?? outerFilter;
    const prefetches = list(q.prefetch).map((pf) => this.run(c, obj(pf), filter));
    const query = q.query;
    if (prefetches.length > 0 && (fusionOf(query) !== null)) {
      const rrf = obj(obj(query).rrf);
      // Qdrant's (weighted) RRF: 1 / (k + (r + 1) / w − 1) for 0-based rank r; k defaults to 2.
      const k = typeof rrf.k === 'number' ? rrf.k : 2;
      const weights = Array.isArray(rrf.weights) ? (rrf.weights as number[]) : null;
      if (weights && weights.length !== prefetches.length) throw new ModelError(400, 'RRF weights must match the prefetches');
      const acc = new Map<string, Scored>();
      prefetches.forEach((res, li) => {
        const w = weights ? weights[li]! : 1;
        res.forEach((s, r) => {
          const cur = acc.get(s.point.id) ?? { point: s.point, score: 0 };
          cur.score += 1 / (k + (r + 1) / w - 1);
          acc.set(s.point.id, cur);
        });
      });
      return [...acc.values()].sort((x, y) => y.score - x.score).slice(0, limit);
    }
    let cands: Point[];
    if (prefetches.length > 0) {
      const union = new Map<string, Point>();
      for (const res of prefetches) for (const s of res) union.set(s.point.id, s.point);
      cands = [...union.values()].filter((p) => q.filter === undefined || q.filter === null || matches(p, q.filter));
    } else {
      cands = [...c.points.values()].filter((p) => matches(p, filter));
    }
    const using = String(q.using ?? '');
    let scored: Scored[];
    if (Array.isArray(query)) {
      if (!c.vectors[using]) throw new ModelError(400, `Wrong input: Not existing vector name: ${using}`);
      const qv = normalize(query as number[]);
      scored = cands.filter((p) => p.dense.has(using)).map((p) => ({ point: p, score: p.dense.get(using)!.reduce((s, x, i) => s + x * qv[i]!, 0) }));
    } else {
      const sq = obj(query);
      if (!Array.isArray(sq.indices)) throw new ModelError(400, `unsupported query ${JSON.stringify(query)}`);
      if (!c.sparse[using]) throw new ModelError(400, `Wrong input: Not existing sparse vector name: ${using}`);
      const idf = c.sparse[using]?.modifier === 'idf';
      // The IDF modifier's statistics are the collection's (every point with the vector).
      const withVec = [...c.points.values()].filter((p) => p.sparse.has(using));
      const n = withVec.length;
      const df = (i: number) => withVec.filter((p) => p.sparse.get(using)!.has(i)).length;
      const weights = new Map((sq.indices as number[]).map((i, j) => [i, (sq.values as number[])[j]! * (idf ? Math.log((n - df(i) + 0.5) / (df(i) + 0.5) + 1) : 1)]));
      scored = [];
      for (const p of cands) {
        const sv = p.sparse.get(using);
        if (!sv) continue;
        let s = 0;
        let overlap = false;
        for (const [i, w] of weights) {
          const x = sv.get(i);
          if (x !== undefined) {
            overlap = true;
            s += w * x;
          }
        }
        if (overlap) scored.push({ point: p, score: s });
      }
    }
    return scored.sort((x, y) => y.score - x.score || (x.point.id < y.point.id ? -1 : 1)).slice(0, limit);
  }

  private query(c: Collection, q: Record<string, unknown>): Json[] {
    return this.run(c, q, undefined).map((s) => ({
      id: s.point.id,
      version: 0,
      score: s.score,
      payload: selectPayload(s.point.payload, q.with_payload),
      vector: selectVector(s.point, q.with_vector),
    }));
  }
}
