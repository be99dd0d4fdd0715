/**
 * The search engine's alternatives, measured side by side on the same rows and queries
 * (issue 13): the lexical top-k of the embedded block-max index against FTS5 (the design it
 * replaced), MiniSearch and FlexSearch, each fed the shared segmenter's terms (so Chinese is
 * segmented alike for all); and the dense leg's HNSW index against the exact scan (recall@10,
 * latency, the crossover size).
 */
import { lexicalTerms, type Embedder } from '@ctxmesh/embedder';
import { EmbeddedVectorIndex, LexicalIndex, openEmbeddedDb, decodeTermCounts, type LexicalQueryTerm, type PreparedLexicalQuery } from '@ctxmesh/stores';
import FlexSearch from 'flexsearch';
import MiniSearch from 'minisearch';
import type { BenchQuery } from './corpus';
import { BENCH_VISIBILITY } from './latency';
import { recallWithTies, summarize, type Summary } from './stats';

/** One lexical engine's figures. */
export interface LexicalEngineResult {
  engine: string;
  /** Time to build the engine's index from the rows, ms (null: it is the store's own, built while loading). */
  buildMs: number | null;
  /** Heap growth while building, MiB (null: on disk). */
  heapMiB: number | null;
  /** Whether the index persists to disk by itself. */
  persists: boolean;
  /** Top-50 query time, ms. */
  query: Summary;
  /** Share of the exact BM25 top 10 (all query terms) in the engine's top 10. */
  overlap10: number;
}

/** The lexical comparison at one size. */
export interface LexicalAlternatives {
  /** Rows compared (the first rows of the account, by id). */
  rows: number;
  queries: number;
  engines: LexicalEngineResult[];
}

type Row = { id: number; main: Map<string, number>; minor: Map<string, number> };

function queryTerms(text: string): LexicalQueryTerm[] {
  const { main, minor } = lexicalTerms(text);
  const m = new Set(main);
  const out: LexicalQueryTerm[] = [...m].map((term) => ({ cls: 0, term, repeat: 1 }));
  for (const term of new Set(minor)) if (!m.has(term)) out.push({ cls: 1, term, repeat: 1 });
  return out;
}

function overlap(got: number[], want: number[]): number {
  if (want.length === 0) return 1;
  const w = new Set(want.slice(0, 10));
  return got.slice(0, 10).filter((id) => w.has(id)).length / w.size;
}

function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

/**
 * Compare the lexical engines on the first `maxRows` rows of the bench account of the SQLite
 * file at `dbPath` (read from the stored term counts), with top-50 queries. The block-max index
 * is the store's own, over every row of the account (its runs are restricted to those rows
 * by a filter, so it reads the postings of the whole account: a handicap); the others are
 * built from those rows alone.
 * @param budget the postings budget the store's leg uses (`maxQueryPostings`)
 */
export function measureLexicalAlternatives(dbPath: string, queries: readonly BenchQuery[], maxRows: number, budget: number): LexicalAlternatives {
  const db = openEmbeddedDb(dbPath);
  try {
    const rows: Row[] = (
      db
        .prepare(`SELECT b.id, b.terms FROM vi_bags b JOIN vi_nodes n ON n.id = b.id WHERE n.account = ? ORDER BY b.id LIMIT ?`)
        .all(BENCH_VISIBILITY.account, maxRows) as Array<{ id: number; terms: string }>
    ).map((r) => ({ id: r.id, ...decodeTermCounts(r.terms) }));
    const maxId = rows.length > 0 ? rows[rows.length - 1]!.id : 0;
    const lex = new LexicalIndex(db);
    const qs = queries.map((q) => queryTerms(q.text));
    const inRows = (id: number) => id <= maxId;
    // The reference: exact BM25 over every query term, on the same rows.
    const exact = qs.map((q) => {
      const p = lex.prepare(BENCH_VISIBILITY.account, q, 0.6);
      return p ? lex.topK(p, 50, inRows).map((h) => h.id) : [];
    });
    const engines: LexicalEngineResult[] = [];
    const timed = (engine: string, buildMs: number | null, heap: number | null, persists: boolean, run: (qi: number) => number[]) => {
      const times: number[] = [];
      let ov = 0;
      for (let pass = 0; pass < 2; pass++) {
        qs.forEach((_, qi) => {
          const t0 = performance.now();
          const ids = run(qi);
          if (pass === 1) {
            times.push(performance.now() - t0);
            ov += overlap(ids, exact[qi]!);
          }
        });
      }
      engines.push({ engine, buildMs, heapMiB: heap, persists, query: summarize(times), overlap10: ov / Math.max(1, qs.length) });
    };

    // The store's own index (built while loading, in the SQLite file).
    // The rarest query terms whose document frequencies sum within a postings budget (the rarest always).
    const dfOf = db.prepare('SELECT df FROM vi_lex_terms WHERE account = ? AND cls = ? AND term = ?');
    const rarest = (q: LexicalQueryTerm[], within: number): LexicalQueryTerm[] => {
      const withDf = q.map((t) => ({ t, df: (dfOf.get(BENCH_VISIBILITY.account, t.cls, t.term) as { df: number } | undefined)?.df ?? 0 }));
      withDf.sort((a, b) => a.df - b.df);
      const kept: LexicalQueryTerm[] = [];
      let sum = 0;
      for (const { t, df } of withDf) {
        if (df === 0) continue;
        if (kept.length > 0 && sum + df > within) break;
        kept.push(t);
        sum += df;
      }
      return kept;
    };
    const prepared = qs.map((q): PreparedLexicalQuery | null => lex.prepare(BENCH_VISIBILITY.account, rarest(q, budget), 0.6, 0.5));
    timed(`block-max index (postings budget ${budget.toLocaleString('en-US')})`, null, null, true, (qi) => {
      const p = prepared[qi];
      return p ? lex.topK(p, 50, inRows).map((h) => h.id) : [];
    });
    const full = qs.map((q) => lex.prepare(BENCH_VISIBILITY.account, q, 0.6));
    timed('block-max index (every query term: exact BM25)', null, null, true, (qi) => {
      const p = full[qi];
      return p ? lex.topK(p, 50, inRows).map((h) => h.id) : [];
    });

    // FTS5, as the store used it before: main and minor columns, the rarest terms within 2,000 postings, bm25().
    {
      const h0 = heapMiB();
      const t0 = performance.now();
      const mem = openEmbeddedDb(':memory:');
      mem.exec(`CREATE VIRTUAL TABLE f USING fts5(main, minor, content='', tokenize="unicode61 remove_diacritics 0 categories 'L* N* M* Co'")`);
      const ins = mem.prepare('INSERT INTO f(rowid, main, minor) VALUES (?, ?, ?)');
      const expand = (m: Map<string, number>) => [...m].flatMap(([t, n]) => Array.from({ length: n }, () => t)).join(' ');
      mem.transaction(() => {
        for (const r of rows) ins.run(r.id, expand(r.main), expand(r.minor));
      })();
      mem.exec("INSERT INTO f(f) VALUES('optimize')");
      const buildMs = performance.now() - t0;
      const heap = heapMiB() - h0;
      // Every match comes back, as the previous leg needed them all to filter per search.
      const stmt = mem.prepare('SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f, 1.0, 0.6)').pluck();
      const quote = (t: string) => '"' + t.replace(/"/g, '""') + '"';
      const match = qs.map((q) => {
        const kept = rarest(q, 2000);
        const main = kept.filter((t) => t.cls === 0).map((t) => quote(t.term));
        const minor = kept.filter((t) => t.cls === 1).map((t) => quote(t.term));
        const parts = [...(main.length ? [`main : (${main.join(' OR ')})`] : []), ...(minor.length ? [`minor : (${minor.join(' OR ')})`] : [])];
        return parts.length ? parts.join(' OR ') : null;
      });
      timed('SQLite FTS5 (the previous design: rarest terms within 2,000 postings, every match returned)', buildMs, heap, true, (qi) => (match[qi] ? (stmt.all(match[qi]) as number[]).slice(0, 50) : []));
      mem.close();
    }

    // MiniSearch: BM25 in memory (it serialises to JSON; nothing on disk by itself).
    {
      const h0 = heapMiB();
      const t0 = performance.now();
      const ms = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], tokenize: (s) => s.split(' '), processTerm: (t) => t });
      ms.addAll(rows.map((r) => ({ id: r.id, text: [...[...r.main].flatMap(([t, n]) => Array.from({ length: n }, () => t)), ...[...r.minor].flatMap(([t, n]) => Array.from({ length: n }, () => '~' + t))].join(' ') })));
      const buildMs = performance.now() - t0;
      const heap = heapMiB() - h0;
      const text = qs.map((q) => q.map((t) => (t.cls === 0 ? t.term : '~' + t.term)).join(' '));
      timed('MiniSearch 7 (BM25+, in memory)', buildMs, heap, false, (qi) => ms.search(text[qi]!, { combineWith: 'OR' }).slice(0, 50).map((r) => r.id as number));
    }

    // FlexSearch: contextual scoring (not BM25), in memory (its persistence needs a database adapter).
    {
      const h0 = heapMiB();
      const t0 = performance.now();
      const fx = new FlexSearch.Index({ tokenize: 'strict', encode: (s: string) => s.split(' ') } as never);
      for (const r of rows) fx.add(r.id, [...r.main.keys(), ...[...r.minor.keys()].map((t) => '~' + t)].join(' '));
      const buildMs = performance.now() - t0;
      const heap = heapMiB() - h0;
      const text = qs.map((q) => q.map((t) => (t.cls === 0 ? t.term : '~' + t.term)).join(' '));
      timed('FlexSearch 0.8 (contextual score, in memory)', buildMs, heap, false, (qi) => (fx.search(text[qi]!, { limit: 50, suggest: true } as never) as number[]).map(Number));
    }
    return { rows: rows.length, queries: qs.length, engines };
  } finally {
    db.close();
  }
}

/** The dense leg's HNSW index against the exact scan at one size. */
export interface AnnMeasurement {
  /** Rows in the bench account. */
  rows: number;
  /** Background build time of the index, ms (null: loaded from its saved file). */
  buildMs: number | null;
  /** Share of the exact top 10 the ANN answer holds, ties at the 10th score counted as found (`recallWithTies`). */
  recall10: number;
  /** Dense-only search through the ANN index, ms. */
  ann: Summary;
  /** Dense-only search, exact scan, ms. */
  exact: Summary;
  /** Rows at which the exact scan would cost what the ANN search costs (the scan grows linearly). */
  crossoverRows: number | null;
}

/**
 * Recall@10 and latency of the HNSW dense leg against the exact scan on the file at `dbPath`
 * (two adapters on one file: one forced onto the ANN index, one exact).
 */
export async function measureAnn(dbPath: string, embedder: Embedder, queries: readonly BenchQuery[], dimension: number): Promise<AnnMeasurement> {
  const dbA = openEmbeddedDb(dbPath);
  const dbE = openEmbeddedDb(dbPath);
  const ann = new EmbeddedVectorIndex(dbA, { dimension, ann: { minRows: 1 } });
  const exact = new EmbeddedVectorIndex(dbE, { dimension, ann: false });
  try {
    const vectors = await embedder.embed(queries.map((q) => q.text));
    const q = (i: number) => ({ visibility: BENCH_VISIBILITY, vector: vectors[i]!, text: '', targets: [] as string[], filter: null, limit: 10 });
    const t0 = performance.now();
    await ann.search([q(0)]);
    const set = (ann as unknown as { anns: { of(a: string): { pending: Set<number>; size: number } | null } }).anns;
    const idx = set.of(BENCH_VISIBILITY.account);
    const loaded = idx !== null && idx.pending.size === 0;
    while (idx && idx.pending.size > 0) await new Promise((r) => setTimeout(r, 200));
    const buildMs = loaded ? null : performance.now() - t0;
    const ta: number[] = [];
    const te: number[] = [];
    let same = 0;
    for (let i = 0; i < vectors.length; i++) {
      let s = performance.now();
      const [a] = await ann.search([q(i)]);
      ta.push(performance.now() - s);
      s = performance.now();
      const [e] = await exact.search([q(i)]);
      te.push(performance.now() - s);
      same += recallWithTies(e!.map((x) => x.score), a!.map((x) => x.score), 10);
    }
    const rows = (await exact.stats(BENCH_VISIBILITY.account)).points;
    const annS = summarize(ta);
    const exactS = summarize(te);
    return { rows, buildMs, recall10: same / Math.max(1, vectors.length), ann: annS, exact: exactS, crossoverRows: exactS.p50 > 0 ? Math.round((rows * annS.p50) / exactS.p50) : null };
  } finally {
    await ann.close();
    dbA.close();
    dbE.close();
  }
}
