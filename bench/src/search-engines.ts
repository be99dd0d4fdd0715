/**
 * The search engine's alternatives, measured side by side on the same rows and queries
 * (issue 13): the lexical top-k of the embedded block-max index against FTS5 (the design it
 * replaced), MiniSearch and FlexSearch, each fed the shared segmenter's terms (so Chinese is
 * segmented alike for all); and the dense leg's HNSW index against the exact scan (recall@10,
 * latency, the crossover size).
 */
import type Database from 'better-sqlite3';
import { lexicalTerms, type Embedder } from '@ctxmesh/embedder';
import {
  DEFAULT_TUNING,
  EmbeddedVectorIndex,
  LexicalIndex,
  openEmbeddedDb,
  decodeTermCounts,
  ranking,
  type EmbeddedDb,
  type LexicalQueryTerm,
  type PreparedLexicalQuery,
} from '@ctxmesh/stores';
import FlexSearch from 'flexsearch';
import MiniSearch from 'minisearch';
import type { BenchQuery } from './corpus';
import type { EvidenceRow } from './evidence';
import type { MadialLang, RankingScores } from './madial-data';
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

// --------------------------------------------------------------------------------------------
// FTS5 fed the ranking's own terms, against the block-max index (issue 21, item 5).

/**
 * Depth of the lexical top-k run a search shares (`searchBatch`'s `MIN_SHARED_LEXICAL`: every
 * search of limit ≤ 33 runs the account's top 200): the depth both legs are timed at.
 */
export const LEG_RUN_DEPTH = 200;

/**
 * FTS5 tokenizer that splits at whitespace only: every other character class is a token
 * character, so the ranking's terms (stemmed words, CJK bigrams and unigrams, joined by spaces)
 * reach the index as they are. unicode61 still folds case, which the terms already are.
 */
const FTS5_PRETOKENIZED = `tokenize="unicode61 remove_diacritics 0 categories 'L* M* N* P* S* C*'"`;

/** The one token of the third column: makes FTS5's row length the ranking's (every term + 1). */
const LENGTH_TOKEN = '\u0001';

type Fts5Table = {
  name: string;
  ins: Database.Statement;
  del: Database.Statement;
  /** Class document frequency from the fts5vocab `col` table. */
  df: Database.Statement;
  top: Database.Statement;
  all: Database.Statement;
};

/** A term of a lexical leg's selection, as the ranking weighed it. */
export type SelectedTerm = Pick<ranking.WeightedTerm, 'cls' | 'term' | 'repeat'>;

/**
 * The FTS5 design of issue 21: one contentless FTS5 table per account (`contentless_delete`,
 * so a row can be removed by id), its columns the row's main terms, its minor terms and one
 * length token, each term repeated as often as the row holds it (at most `MAX_TF`) — the term
 * counts the store keeps per row (`vi_bags`), so FTS5 indexes exactly the block-max index's
 * postings. A top-k is `bm25(t, 1, minorWeight, 0)` ordered in SQL, over the ranking's
 * selected terms (a term the query repeats is a repeated phrase: FTS5 weighs each phrase by its
 * own IDF, as the ranking weighs `repeat × idf`). Its class document frequencies come from the
 * table's fts5vocab `col` view. Kept in its own SQLite file, mirrored from the store's by
 * {@link sync}.
 */
export class Fts5Lexical {
  /** The FTS5 file. */
  readonly db: EmbeddedDb;
  private readonly tables = new Map<string, Fts5Table>();
  /** Rows mirrored: id → (account, encoded term counts). */
  private readonly rows = new Map<number, { account: string; terms: string }>();
  private ver = -1;

  /**
   * @param path the FTS5 file (`:memory:` for a test)
   * @param minorWeight minor terms' column weight (the tuning's)
   */
  constructor(
    path: string,
    private readonly minorWeight: number = DEFAULT_TUNING.minorWeight,
  ) {
    this.db = openEmbeddedDb(path);
  }

  /** The account's table, created on first use. */
  private table(account: string): Fts5Table {
    let t = this.tables.get(account);
    if (t) return t;
    const name = `f${this.tables.size}`;
    this.db.exec(`CREATE VIRTUAL TABLE ${name} USING fts5(main, minor, len, content='', contentless_delete=1, ${FTS5_PRETOKENIZED});
      CREATE VIRTUAL TABLE ${name}_col USING fts5vocab(${name}, 'col');`);
    const rank = `bm25(${name}, 1.0, ${this.minorWeight}, 0.0)`;
    t = {
      name,
      ins: this.db.prepare(`INSERT INTO ${name}(rowid, main, minor, len) VALUES (?, ?, ?, '${LENGTH_TOKEN}')`),
      del: this.db.prepare(`DELETE FROM ${name} WHERE rowid = ?`),
      df: this.db.prepare(`SELECT doc FROM ${name}_col WHERE term = ? AND col = ?`).pluck(),
      top: this.db.prepare(`SELECT rowid, ${rank} AS s FROM ${name} WHERE ${name} MATCH ? ORDER BY s, rowid LIMIT ?`).raw(),
      all: this.db.prepare(`SELECT rowid, ${rank} AS s FROM ${name} WHERE ${name} MATCH ? ORDER BY s, rowid`).raw(),
    };
    this.tables.set(account, t);
    return t;
  }

  /**
   * Bring the mirror up to the store's rows (`vi_bags` ⨝ `vi_nodes`), when the store's lexical
   * version moved since the last sync: rows gone or changed are deleted, new ones inserted, in
   * one transaction. Call it inside the store's read transaction for one snapshot.
   * @param optimize merge FTS5's segments afterwards (after a bulk load, as the store's `optimize()` merges its tail)
   * @returns rows inserted and deleted, and the time taken, ms
   */
  sync(store: EmbeddedDb, optimize = false): { added: number; removed: number; ms: number } {
    const t0 = performance.now();
    const ver = (store.prepare('SELECT ver FROM vi_lex_version WHERE id = 1').pluck().get() as number | undefined) ?? 0;
    if (ver === this.ver) return { added: 0, removed: 0, ms: performance.now() - t0 };
    const now = new Map<number, { account: string; terms: string }>();
    for (const [id, account, terms] of store.prepare('SELECT b.id, n.account, b.terms FROM vi_bags b JOIN vi_nodes n ON n.id = b.id').raw().iterate() as Iterable<[number, string, string]>) {
      now.set(id, { account, terms });
    }
    let added = 0;
    let removed = 0;
    const expand = (m: ReadonlyMap<string, number>): string => {
      const out: string[] = [];
      for (const [t, n] of m) for (let i = 0; i < Math.min(n, ranking.MAX_TF); i++) out.push(t);
      return out.join(' ');
    };
    this.db.transaction(() => {
      for (const [id, was] of this.rows) {
        const is = now.get(id);
        if (is && is.account === was.account && is.terms === was.terms) continue;
        this.table(was.account).del.run(id);
        this.rows.delete(id);
        removed++;
      }
      for (const [id, r] of now) {
        if (this.rows.has(id)) continue;
        const c = decodeTermCounts(r.terms);
        this.table(r.account).ins.run(id, expand(c.main), expand(c.minor));
        this.rows.set(id, r);
        added++;
      }
    })();
    if (optimize) for (const t of this.tables.values()) this.db.exec(`INSERT INTO ${t.name}(${t.name}) VALUES('optimize')`);
    this.ver = ver;
    return { added, removed, ms: performance.now() - t0 };
  }

  /** Rows the account's table holds and the sum of their lengths (fts5vocab: the length token's count is the row count). */
  rowStats(account: string): { rows: number; tokens: number } {
    const t = this.tables.get(account);
    if (!t) return { rows: 0, tokens: 0 };
    const r = this.db.prepare(`SELECT SUM(cnt) AS tokens, SUM(CASE WHEN col = 'len' THEN doc ELSE 0 END) AS rows FROM ${t.name}_col`).get() as { tokens: number | null; rows: number | null };
    return { rows: r.rows ?? 0, tokens: r.tokens ?? 0 };
  }

  /** Distinct (class, term) pairs of the account's table (main and minor columns). */
  termCount(account: string): number {
    const t = this.tables.get(account);
    return t ? (this.db.prepare(`SELECT COUNT(*) FROM ${t.name}_col WHERE col <> 'len'`).pluck().get() as number) : 0;
  }

  /** Rows of the account holding a term in a class (0 when none or no table). */
  df(account: string, cls: 0 | 1, term: string): number {
    const t = this.tables.get(account);
    return t ? ((t.df.get(term, cls === 0 ? 'main' : 'minor') as number | undefined) ?? 0) : 0;
  }

  /**
   * The `k` best rows of the account by FTS5's `bm25()` over the terms, best first (ties: lower
   * id first), with the ranking's BM25 (FTS5's negated); every matching row when `k` is null.
   */
  topK(account: string, terms: readonly SelectedTerm[], k: number | null): Array<{ id: number; score: number }> {
    const t = this.tables.get(account);
    if (!t || terms.length === 0) return [];
    const phrases: string[] = [];
    for (const q of terms) {
      const p = `${q.cls === 0 ? 'main' : 'minor'} : "${q.term.replace(/"/g, '""')}"`;
      for (let i = 0; i < Math.max(1, q.repeat); i++) phrases.push(p);
    }
    const match = phrases.join(' OR ');
    const rows = (k === null ? t.all.all(match) : t.top.all(match, k)) as Array<[number, number]>;
    return rows.map(([id, s]) => ({ id, score: -s }));
  }

  /** Close the FTS5 file. */
  close(): void {
    this.db.close();
  }
}

/** One lexical leg run: the terms selected and the top-k. */
export interface LexicalLegRun {
  selected: SelectedTerm[];
  hits: Array<{ id: number; score: number }>;
}

type TermRow = NonNullable<ReturnType<LexicalIndex['term']>>;

/**
 * The lexical leg of one search, as the store runs it, on either engine: the query's terms
 * (`QueryTerms`), the account's statistics, the ranking's selection (`QueryScorer`: the rarest
 * within the postings budget) and the top-k over the selected terms. Both engines share the
 * bookkeeping a store keeps either way (`vi_lex_rows`, `vi_terms`); the class document
 * frequencies come from each engine (`vi_lex_terms` and the tail, or fts5vocab).
 */
export class LexicalLegs {
  private readonly vocab: Database.Statement;

  constructor(
    private readonly store: EmbeddedDb,
    private readonly index: LexicalIndex,
    private readonly fts: Fts5Lexical,
    private readonly tuning = DEFAULT_TUNING,
  ) {
    this.vocab = store.prepare('SELECT term, df FROM vi_terms WHERE account = ? AND term IN (SELECT value FROM json_each(?))').raw();
  }

  private scorer(account: string, query: ranking.QueryTerms, classDf: (cls: 0 | 1, term: string) => number): ranking.QueryScorer {
    const any = new Map<string, number>();
    for (const [term, df] of this.vocab.all(account, JSON.stringify([...query.set.keys()])) as Array<[string, number]>) any.set(term, df);
    const memo = new Map<string, number>();
    const { rows, tokens } = this.index.rowStats(account);
    return new ranking.QueryScorer(
      query,
      {
        docs: rows,
        tokens,
        df: (key) => {
          if (key[0] === '*') return any.get(key.slice(2)) ?? 0;
          let d = memo.get(key);
          if (d === undefined) memo.set(key, (d = classDf(key[0] === '0' ? 0 : 1, key.slice(2))));
          return d;
        },
      },
      this.tuning,
    );
  }

  /** The block-max index's leg (what `LexicalLeg.query` and its shared top-k run do). */
  blockMax(account: string, text: string, k: number): LexicalLegRun {
    return this.store.transaction((): LexicalLegRun => {
      const query = new ranking.QueryTerms(text, this.tuning);
      if (query.empty) return { selected: [], hits: [] };
      const rows = new Map<string, TermRow | undefined>();
      const row = (cls: 0 | 1, term: string): TermRow | undefined => {
        const key = `${cls}:${term}`;
        if (!rows.has(key)) rows.set(key, this.index.term(account, cls, term));
        return rows.get(key);
      };
      const scorer = this.scorer(account, query, (cls, term) => row(cls, term)?.df ?? 0);
      const prepared = this.index.resolve(
        scorer.selected.map((t) => ({ row: row(t.cls, t.term)!, w: t.w, colWeight: t.colWeight })),
        scorer.avgLen,
      );
      return { selected: [...scorer.selected], hits: prepared ? this.index.topK(prepared, k) : [] };
    })();
  }

  /** FTS5's leg: the same selection from fts5vocab's frequencies, then `bm25()` top-k in SQL. */
  fts5(account: string, text: string, k: number): LexicalLegRun {
    const query = new ranking.QueryTerms(text, this.tuning);
    if (query.empty) return { selected: [], hits: [] };
    const scorer = this.scorer(account, query, (cls, term) => this.fts.df(account, cls, term));
    return { selected: [...scorer.selected], hits: this.fts.topK(account, scorer.selected, k) };
  }
}

/** The private shape of `EmbeddedVectorIndex`'s lexical leg that {@link swapLexicalLeg} replaces. */
interface LegInternals {
  db: EmbeddedDb;
  lexical: {
    cache: { where: Map<number, { shard: unknown; slot: number }> };
    topK(lex: { scorer: ranking.QueryScorer | null }, shard: { account: string; live: Uint8Array }, accept: (slot: number) => boolean, k: number, sharedK: number): Array<{ slot: number; score: number }>;
  };
}

/**
 * Put FTS5 in place of the block-max index's top-k in an index's hybrid search (bench only:
 * it replaces a private method of the index's lexical leg). The searches of a batch share one
 * account-wide run `sharedK` deep, as the store's leg does; a narrower scope than that holds
 * runs every match and filters. The mirror is synced from the index's file whenever the
 * store's lexical version moved.
 * @returns a function that puts the block-max leg back
 */
export function swapLexicalLeg(index: EmbeddedVectorIndex, fts: Fts5Lexical): () => void {
  const inner = index as unknown as LegInternals;
  const leg = inner.lexical;
  const own = Object.getOwnPropertyDescriptor(leg, 'topK');
  leg.topK = (lex, shard, accept, k, sharedK) => {
    fts.sync(inner.db);
    const terms = lex.scorer?.selected ?? [];
    if (terms.length === 0) return [];
    const where = leg.cache.where;
    const slotOf = (id: number): number => {
      const w = where.get(id);
      return w !== undefined && w.shard === shard && shard.live[w.slot] === 1 ? w.slot : -1;
    };
    const take = (hits: Array<{ id: number; score: number }>) => {
      const out: Array<{ slot: number; score: number }> = [];
      for (const h of hits) {
        const slot = slotOf(h.id);
        if (slot >= 0 && accept(slot)) out.push({ slot, score: h.score });
        if (out.length >= k) break;
      }
      return out;
    };
    const depth = Math.max(k, sharedK);
    const shared = fts.topK(shard.account, terms, depth);
    const out = take(shared);
    return out.length >= k || shared.length < depth ? out : take(fts.topK(shard.account, terms, null));
  };
  return () => {
    if (own) Object.defineProperty(leg, 'topK', own);
    else delete (leg as Partial<LegInternals['lexical']>).topK;
  };
}

/** One engine's lexical leg at one size. */
export interface LexicalLegEngine {
  engine: 'block-max' | 'fts5';
  /** The leg alone (selection + top-{@link LEG_RUN_DEPTH}), ms. */
  leg: Summary;
  /** A lexical-only store search (`search` with no vector, limit 10) with this engine's leg, ms. */
  search: Summary;
  /** Share of the exact BM25 top 10 (every query term) in the leg's top 10. */
  overlap10: number;
}

/** The two legs side by side at one size. */
export interface LexicalLegSize {
  /** Rows of the bench account (lexical rows: documents, passages, sidecars). */
  rows: number;
  queries: number;
  engines: LexicalLegEngine[];
  /** FTS5's top 10 against the block-max index's (both over the same selected terms). */
  agreement: { overlap10: number; sameSelection: number; maxScoreDiff: number };
  /** The FTS5 mirror: rows inserted this size and the time (with its `optimize`), its file size, and its statistics against the store's. */
  fts5: { added: number; buildMs: number; fileMiB: number; rows: number; storeRows: number; tokens: number; storeTokens: number; terms: number; storeTerms: number };
}

function fileMiB(db: EmbeddedDb): number {
  const r = db.prepare('SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()').get() as { b: number };
  return r.b / (1024 * 1024);
}

/**
 * Both lexical legs on the store file at `dbPath` (its bench account), after bringing the FTS5
 * mirror up to it: each query's leg on both engines (two passes, the second timed, which
 * engine goes first alternating per query), then the store's lexical-only search with each leg.
 */
export async function measureLexicalLegs(dbPath: string, index: EmbeddedVectorIndex, fts: Fts5Lexical, queries: readonly BenchQuery[]): Promise<LexicalLegSize> {
  const db = openEmbeddedDb(dbPath);
  try {
    const account = BENCH_VISIBILITY.account;
    const built = fts.sync(db, true);
    const lex = new LexicalIndex(db);
    const legs = new LexicalLegs(db, lex, fts);
    const storeStats = lex.rowStats(account);
    const storeTerms = db.prepare('SELECT COUNT(*) FROM vi_lex_terms WHERE account = ? AND df > 0').pluck().get(account) as number;
    const ftsStats = fts.rowStats(account);
    const exact = queries.map((q) => {
      const terms = new ranking.QueryTerms(q.text, DEFAULT_TUNING).terms;
      const p = lex.prepare(account, terms, DEFAULT_TUNING.minorWeight);
      return p ? lex.topK(p, 10).map((h) => h.id) : [];
    });
    const time = { 'block-max': [] as number[], fts5: [] as number[] };
    const ov = { 'block-max': 0, fts5: 0 };
    let agree = 0;
    let same = 0;
    let maxDiff = 0;
    for (let pass = 0; pass < 2; pass++) {
      queries.forEach((q, qi) => {
        const order = qi % 2 === 0 ? (['block-max', 'fts5'] as const) : (['fts5', 'block-max'] as const);
        const runs: Partial<Record<'block-max' | 'fts5', LexicalLegRun>> = {};
        for (const e of order) {
          const t0 = performance.now();
          runs[e] = e === 'fts5' ? legs.fts5(account, q.text, LEG_RUN_DEPTH) : legs.blockMax(account, q.text, LEG_RUN_DEPTH);
          if (pass === 1) time[e].push(performance.now() - t0);
        }
        if (pass === 0) return;
        const b = runs['block-max']!;
        const f = runs.fts5!;
        ov['block-max'] += overlap(b.hits.map((h) => h.id), exact[qi]!);
        ov.fts5 += overlap(f.hits.map((h) => h.id), exact[qi]!);
        agree += overlap(f.hits.map((h) => h.id), b.hits.map((h) => h.id));
        const key = (r: LexicalLegRun) => JSON.stringify(r.selected.map((t) => [t.cls, t.term, t.repeat]));
        if (key(b) === key(f)) same++;
        const byId = new Map(b.hits.map((h) => [h.id, h.score]));
        for (const h of f.hits.slice(0, 10)) {
          const s = byId.get(h.id);
          if (s !== undefined) maxDiff = Math.max(maxDiff, Math.abs(s - h.score));
        }
      });
    }
    // The store's lexical-only search, with its own leg and with FTS5's, interleaved per query.
    const search = { 'block-max': [] as number[], fts5: [] as number[] };
    const base = { visibility: BENCH_VISIBILITY, vector: null, targets: [] as string[], filter: null, limit: 10 };
    for (let pass = 0; pass < 2; pass++) {
      for (let qi = 0; qi < queries.length; qi++) {
        const order = qi % 2 === 0 ? (['block-max', 'fts5'] as const) : (['fts5', 'block-max'] as const);
        for (const e of order) {
          const undo = e === 'fts5' ? swapLexicalLeg(index, fts) : () => undefined;
          try {
            const t0 = performance.now();
            await index.search([{ ...base, text: queries[qi]!.text }]);
            if (pass === 1) search[e].push(performance.now() - t0);
          } finally {
            undo();
          }
        }
      }
    }
    const n = Math.max(1, queries.length);
    return {
      rows: storeStats.rows,
      queries: queries.length,
      engines: (['block-max', 'fts5'] as const).map((engine) => ({ engine, leg: summarize(time[engine]), search: summarize(search[engine]), overlap10: ov[engine] / n })),
      agreement: { overlap10: agree / n, sameSelection: same / n, maxScoreDiff: maxDiff },
      fts5: {
        added: built.added,
        buildMs: built.ms,
        fileMiB: fileMiB(fts.db),
        rows: ftsStats.rows,
        storeRows: storeStats.rows,
        tokens: ftsStats.tokens,
        storeTokens: storeStats.tokens,
        terms: fts.termCount(account),
        storeTerms,
      },
    };
  } finally {
    db.close();
  }
}

/** One engine's retrieval quality on MADial (per-user pools) with its leg in the hybrid search. */
export interface LexicalEngineQuality {
  engine: 'block-max' | 'fts5';
  /** `/find` recall@5 (the `madial` section's protocol, pool `user`). */
  madial: Partial<Record<MadialLang, RankingScores>>;
  /** The `evidence` section's rows (pool `user`, every dialogue). */
  evidence: EvidenceRow[];
}

/** The issue-21 rule applied to the measured figures. */
export interface LexicalDecision {
  /** Largest |FTS5 − block-max| MADial recall@5 over the languages. */
  recall5Delta: number;
  /** Largest |FTS5 − block-max| evidence recall over the evidence rows (same language, body, budget, arm). */
  evidenceDelta: number;
  /** FTS5 leg p50 / block-max leg p50, by size. */
  legRatio: Record<string, number>;
  /** FTS5 lexical-only search p50 / block-max's, by size. */
  searchRatio: Record<string, number>;
  /** Whether FTS5 is within {@link RECALL_TOLERANCE} on both recalls and {@link LATENCY_TOLERANCE}× the leg p50 at every size. */
  fts5Qualifies: boolean;
}

/** The lexical section's report. */
export interface LexicalEnginesReport {
  /** The corpus the legs were timed on. */
  corpus: 'default';
  /** Depth of each timed top-k ({@link LEG_RUN_DEPTH}). */
  legDepth: number;
  /** The legs side by side, by corpus size (documents). */
  sizes: Record<string, LexicalLegSize>;
  /** MADial quality with each engine's leg. */
  quality: LexicalEngineQuality[];
  decision?: LexicalDecision;
}

/** How much recall FTS5 may lose and still replace the index (issue 21, item 5). */
export const RECALL_TOLERANCE = 0.005;
/** How much slower its leg may be (p50 ratio). */
export const LATENCY_TOLERANCE = 1.3;

/** Apply the rule: FTS5 within 0.005 recall (MADial recall@5 and evidence recall) and 1.3× the leg's p50 at every size. */
export function decideLexicalEngine(r: Pick<LexicalEnginesReport, 'sizes' | 'quality'>): LexicalDecision {
  const bm = r.quality.find((q) => q.engine === 'block-max');
  const ft = r.quality.find((q) => q.engine === 'fts5');
  let recall5Delta = Number.NaN;
  let evidenceDelta = Number.NaN;
  if (bm && ft) {
    recall5Delta = 0;
    for (const lang of ['en', 'zh'] as const) {
      const a = bm.madial[lang]?.recall5;
      const b = ft.madial[lang]?.recall5;
      recall5Delta = Math.max(recall5Delta, a === undefined || b === undefined ? Number.NaN : Math.abs(a - b));
    }
    evidenceDelta = 0;
    const key = (e: EvidenceRow) => [e.lang, e.pool, e.split, e.body, e.budget, e.arm].join('/');
    const other = new Map(ft.evidence.map((e) => [key(e), e.recall]));
    for (const e of bm.evidence) {
      const b = other.get(key(e));
      evidenceDelta = Math.max(evidenceDelta, b === undefined ? Number.NaN : Math.abs(e.recall - b));
    }
    if (bm.evidence.length === 0 || ft.evidence.length !== bm.evidence.length) evidenceDelta = Number.NaN;
  }
  const legRatio: Record<string, number> = {};
  const searchRatio: Record<string, number> = {};
  for (const [size, s] of Object.entries(r.sizes)) {
    const e = (name: LexicalLegEngine['engine']) => s.engines.find((x) => x.engine === name);
    legRatio[size] = (e('fts5')?.leg.p50 ?? Number.NaN) / (e('block-max')?.leg.p50 ?? Number.NaN);
    searchRatio[size] = (e('fts5')?.search.p50 ?? Number.NaN) / (e('block-max')?.search.p50 ?? Number.NaN);
  }
  const ratios = Object.values(legRatio);
  const fts5Qualifies = recall5Delta <= RECALL_TOLERANCE && evidenceDelta <= RECALL_TOLERANCE && ratios.length > 0 && ratios.every((x) => x <= LATENCY_TOLERANCE);
  return { recall5Delta, evidenceDelta, legRatio, searchRatio, fts5Qualifies };
}
