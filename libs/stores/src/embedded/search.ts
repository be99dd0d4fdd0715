import { type SearchHit, type SearchQuery, missingDocuments, passageDocOf } from '../ports/vector-index';
import { type DenseCandidate, type TermsOf, documentPool, legDepth, rank as rankSearch, takeDocuments } from '../ranking/rank';
import type { DocTerms } from '../ranking/terms';
import type { RelevanceFeatures } from '../ranking/relevance';
import type { HybridTuning } from '../tuning';
import type { DenseAnn } from './ann';
import { DenseBatch, annTopK, denseTopK } from './dense-leg';
import type { LexicalTopKStats } from './lexical-index';
import type { LexicalLeg, LexResult } from './lexical-leg';
import { planQuery } from './plan';
import { type NodeRow, toSummary, visibleRow } from './rows';
import { type ScanCache, type Shard, type SlotRange, unit } from './scan-cache';
import type { Statements } from './statements';
import type { TermBags } from './term-bags';

/** What a batch of searches reads: the synced scan cache, the legs and the payload statements. */
export interface SearchContext {
  tuning: HybridTuning;
  cache: ScanCache;
  lexical: LexicalLeg;
  bags: TermBags;
  st: Statements;
  /** Counters of the lexical top-k runs, when wanted. */
  stats?: LexicalTopKStats;
  /** The ANN index of an account, when it has one (large accounts only). */
  ann?: (account: string) => DenseAnn | null;
  /** Counters of the dense leg's ANN use, when wanted. */
  annStats?: { annSearches: number; fallbacks: number };
}

/** Smallest depth of the lexical top-k run the searches of a batch share. */
const MIN_SHARED_LEXICAL = 200;

/**
 * Most rows an ANN index may still have to add for a search over `rows` rows to use it: a
 * fiftieth of them, at least 1,024. Beyond it the search scans (the int8 scan of 500,000 rows
 * costs about as much as scoring 10,000 pending rows one at a time).
 */
export function maxPendingFor(rows: number): number {
  return Math.max(1024, Math.floor(rows / 50));
}

/** Whether a slot lies in one of the ascending, disjoint half-open ranges. */
function inRanges(ranges: readonly SlotRange[], slot: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid]!;
    if (slot < a) hi = mid - 1;
    else if (slot >= b) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * Run a batch of hybrid searches over a synced scan cache (see `EmbeddedVectorIndex.search`).
 * Work is shared across the batch: the dense scores of one query vector are computed once per
 * row, the lexical hits of one text once per account, and identical searches run once.
 * @throws UnsupportedFilterError for a filter the index cannot evaluate
 */
export function searchBatch(ctx: SearchContext, queries: SearchQuery[]): SearchHit[][] {
  const { tuning, cache, st } = ctx;
  const plans = queries.map((q) => planQuery(q, cache));
  const lexMemo = new Map<string, LexResult>();
  const picked: Array<{ slots: number[]; scores: number[]; features: RelevanceFeatures[]; shard: Shard | undefined }> = [];
  // The dense leg of a search whose scope holds many rows comes from the ANN index.
  const annOf = queries.map((q, qi): DenseAnn | null => {
    const { shard, ranges, tail } = plans[qi];
    if (!q.vector || !shard || !ctx.ann || !(q.limit > 0)) return null;
    const ann = ctx.ann(shard.account);
    if (!ann) return null;
    let rows = tail.length;
    for (const [lo, hi] of ranges) rows += hi - lo;
    // Rows not in the index yet are scored one by one beside its candidates: while it is being
    // built (a fresh large account, or a big ingest) the scan costs far less than that.
    return rows >= ann.opts.minRows && ann.pending.size <= maxPendingFor(rows) ? ann : null;
  });
  const dense = new DenseBatch(queries, plans, (qi) => annOf[qi] !== null);

  // Rows each search ranks (a search counting documents ranks a pool of rows, then cuts it).
  const rowsOf = (q: SearchQuery): number => (q.documents ? documentPool(q.limit) : Math.floor(q.limit));
  // The deepest lexical leg per (account, text): the depth of the run those searches share.
  const deepest = new Map<string, number>();
  for (const q of queries) {
    if (!q.text || q.text.trim() === '' || !(q.limit > 0)) continue;
    const key = q.visibility.account + '\u0000' + q.text;
    deepest.set(key, Math.max(deepest.get(key) ?? 0, legDepth(rowsOf(q), tuning)));
  }

  // Identical searches in one batch (gather's per-bucket peer scans are) run once.
  const firstOf = new Map<string, number>();
  const same = queries.map((q, qi) => {
    const sig = JSON.stringify([q.visibility, q.targets, q.filter, q.limit, !!q.documents, q.levels ?? [], q.asOf ?? null, q.scoreThreshold ?? null, q.text, dense.keys[qi], !!q.vector]);
    const first = firstOf.get(sig);
    if (first !== undefined) return first;
    firstOf.set(sig, qi);
    return qi;
  });

  queries.forEach((q, qi) => {
    if (same[qi] !== qi) {
      picked.push(picked[same[qi]]);
      return;
    }
    const { shard, pred, ranges, tail } = plans[qi];
    const limit = rowsOf(q);
    // A scope without rows (a peer scan of a user who has no peers) has no hits: neither leg
    // runs. Its lexical leg would otherwise share the account-wide top-k run, find none of it
    // in scope and walk every posting of the query's terms to prove it.
    if (!shard || !(limit > 0) || (ranges.length === 0 && tail.length === 0)) {
      picked.push({ slots: [], scores: [], features: [], shard });
      return;
    }
    const legK = legDepth(limit, tuning);

    const tailSet = tail.length > 0 ? new Set(tail) : null;
    const sorted = shard.sortedUpTo;
    const inScope = (slot: number): boolean => (slot < sorted ? inRanges(ranges, slot) : tailSet !== null && tailSet.has(slot)) && pred(slot);
    // Approximate cosines pick the dense candidates; every cosine the ranking reads is exact.
    let cosines = dense.cosines(qi, shard);
    let uqScan = dense.unitQuery(qi);
    const exactCos = (uq: Float32Array | null): ((slot: number) => number) | null => (uq ? (s) => shard.vectors.dot(uq, s) : null);
    let cosOf = exactCos(uqScan);
    let denseList: number[] = [];
    const ann = annOf[qi];
    if (ann) {
      const uq = unit(q.vector as Float32Array);
      const approx = annTopK(ann, uq, shard, inScope, cache.where, legK);
      if (approx) {
        denseList = approx;
        cosOf = (s) => shard.vectors.dot(uq, s);
        if (ctx.annStats) ctx.annStats.annSearches++;
      } else {
        // Too narrow a scope for the candidates: the scan, for this search alone.
        const one = new DenseBatch([q], [plans[qi]]);
        cosines = one.cosines(0, shard);
        uqScan = one.unitQuery(0);
        cosOf = exactCos(uqScan);
        if (ctx.annStats) ctx.annStats.fallbacks++;
      }
    }
    if (cosines) denseList = denseTopK(cosines, shard, ranges, tail, pred, legK, uqScan);

    // Lexical leg: the search's own top-k by BM25, within its scope and filters.
    let lexList: Array<{ slot: number; score: number }> = [];
    let lex: LexResult | null = null;
    if (q.text && q.text.trim() !== '') {
      const key = q.visibility.account + '\u0000' + q.text;
      lex = lexMemo.get(key) ?? ctx.lexical.query(q.text, shard);
      lexMemo.set(key, lex);
      const sharedK = Math.max(MIN_SHARED_LEXICAL, 2 * (deepest.get(key) ?? legK));
      lexList = ctx.lexical.topK(lex, shard, inScope, legK, sharedK, ctx.stats);
    }

    // The shared ranking orders, fuses, scores and thresholds the candidates (the lexical ones
    // with the BM25 the index computed: the ranking reads term counts only for its TF-IDF head
    // and the hits' coverage, as the embedded index always did).
    const terms: TermsOf<number> = (slots) => {
      const ids = slots.map((s) => shard.ids[s]);
      const docs = ctx.bags.get(ids);
      const out = new Map<number, DocTerms>();
      slots.forEach((s, i) => {
        const d = docs.get(ids[i]);
        if (d) out.set(s, d);
      });
      return out;
    };
    const cos = cosOf;
    const denseCands: Array<DenseCandidate<number>> = cos ? denseList.map((s) => ({ key: s, uri: shard.uri[s], cosine: cos(s) })) : [];
    let ranked = rankSearch(
      { limit, dense: denseCands, lexical: lexList.map(({ slot, score }) => ({ key: slot, uri: shard.uri[slot], bm25: score })), scorer: lex?.scorer ?? null, terms, cosine: cos, threshold: q.scoreThreshold ?? null },
      tuning,
    );
    // Only the rows of the first `limit` documents are read and returned.
    if (q.documents) ranked = takeDocuments(ranked, q.limit, (h) => shard.docUri[h.key] || shard.uri[h.key]);
    picked.push({ slots: ranked.map((h) => h.key), scores: ranked.map((h) => h.score), features: ranked.map((h) => h.features), shard });
  });

  // One payload read for the whole batch.
  const ids = new Set<number>();
  for (const p of picked) for (const s of p.slots) ids.add((p.shard as Shard).ids[s]);
  const withOverview = queries.some((q) => q.withOverview);
  const rows = new Map<number, NodeRow>();
  if (ids.size > 0) {
    const stmt = withOverview ? st.summariesOvByIds : st.summariesByIds;
    for (const r of stmt.all(JSON.stringify([...ids])) as NodeRow[]) rows.set(r.id, r);
  }
  const hits = picked.map((p, qi) => {
    const out: SearchHit[] = [];
    p.slots.forEach((s, i) => {
      const r = rows.get((p.shard as Shard).ids[s]);
      if (r) out.push({ node: toSummary(r, !!queries[qi].withOverview), score: p.scores[i], features: p.features[i] });
    });
    return out;
  });
  attachDocuments(st, queries, hits);
  return hits;
}

/**
 * A search counting documents hands each passage hit its document's point (`SearchHit.document`,
 * with its overview when the search asks for overviews) when that point did not hit itself and
 * is visible to the search: read here, in one statement per account for the batch, so a caller
 * collapsing passages needs no read of its own.
 */
function attachDocuments(st: Statements, queries: readonly SearchQuery[], hits: SearchHit[][]): void {
  const wanted = new Map<string, Set<string>>();
  const missing = hits.map((list, qi) => {
    const docs = queries[qi].documents ? missingDocuments(list) : [];
    if (docs.length === 0) return [];
    const account = queries[qi].visibility.account;
    const uris = wanted.get(account) ?? new Set<string>();
    wanted.set(account, uris);
    for (const d of docs) uris.add(d);
    const need = new Set(docs);
    return list.filter((h) => need.has(passageDocOf(h.node) ?? ''));
  });
  if (wanted.size === 0) return;
  const withOverview = queries.some((q) => q.documents && q.withOverview);
  const stmt = withOverview ? st.summariesOvByUris : st.summariesByUris;
  const docs = new Map<string, Map<string, NodeRow>>();
  for (const [account, uris] of wanted) {
    const byUri = new Map<string, NodeRow>();
    for (const r of stmt.all(account, JSON.stringify([...uris])) as NodeRow[]) byUri.set(r.uri, r);
    docs.set(account, byUri);
  }
  missing.forEach((need, qi) => {
    const vis = queries[qi].visibility;
    const byUri = docs.get(vis.account);
    for (const h of need) {
      const r = byUri?.get(h.node.docUri);
      if (r && visibleRow(r, vis)) h.document = toSummary(r, !!queries[qi].withOverview);
    }
  });
}

