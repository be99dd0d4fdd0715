import type { Schemas } from '@qdrant/js-client-rest';
import { LRUCache } from 'lru-cache';
import { type CorpusStats, type DfKey, dfKey } from '../ranking/query';
import { canBeMinor } from '../ranking/terms';
import { P, STATE_LIVE } from './schema';

/*
 * The account statistics the shared ranking needs ({@link CorpusStats}), from Qdrant:
 *
 * - live rows: `POST /points/count` (exact) under the account and `state = live`;
 * - the sum of the rows' BM25 lengths: Qdrant has no sum, so every point stores the set bits of
 *   its length as keyword values (`lex_len_bits`: length 13 = 0b1101 → "0", "2", "3"), and one
 *   `POST /facet` (exact) on that field counts the rows holding each bit: Σ 2^bit × count;
 * - the document frequency of a term: every point stores its terms as keyword values by class
 *   (`lex_terms`: "0:<main term>", "1:<minor term>"), and one `POST /points/count` (exact) per
 *   term counts the live rows holding it — in either class with `match: any`.
 *
 * Each figure is cached per account for `ttlMs` (the adapter drops an account's figures when it
 * writes to it, so its own writes are seen at once; another replica's within `ttlMs`), requests
 * run at most `concurrency` at a time, and concurrent searches share a request in flight.
 */

/** Filter of the live points of one account. */
function liveOf(account: string): Schemas['Condition'][] {
  return [
    { key: P.account, match: { value: account } },
    { key: P.state, match: { value: STATE_LIVE } },
  ];
}

/** `POST /collections/{name}/points/count` body: the account's live points. */
export function liveCountBody(account: string): Schemas['CountRequest'] {
  return { filter: { must: liveOf(account) }, exact: true };
}

/** Bits a row length can have (lengths are far below 2^32). */
const LENGTH_BITS = 32;

/** The `lex_len_bits` payload of a row length: its set bits, as decimal strings. */
export function lengthBits(length: number): string[] {
  const out: string[] = [];
  for (let b = 0; b < LENGTH_BITS; b++) if (Math.floor(length / 2 ** b) % 2 === 1) out.push(String(b));
  return out;
}

/** `POST /collections/{name}/facet` body: the account's live points per bit of their length. */
export function lengthFacetBody(account: string): Schemas['FacetRequest'] {
  return { key: P.lexLenBits, limit: LENGTH_BITS, filter: { must: liveOf(account) }, exact: true };
}

/** Sum of the lengths from a {@link lengthFacetBody} answer. */
export function tokensOf(hits: ReadonlyArray<{ value: unknown; count: number }>): number {
  let sum = 0;
  for (const h of hits) {
    const b = Number(h.value);
    if (Number.isInteger(b) && b >= 0 && b < LENGTH_BITS) sum += 2 ** b * h.count;
  }
  return sum;
}

/**
 * The `lex_terms` values one document-frequency key counts: a class key itself; `*:t` both
 * class keys — or only the main one for a term of two characters or more, which is never a
 * minor term (so `*:t` and `0:t` are one request).
 */
export function termValues(key: DfKey): string[] {
  const term = key.slice(2);
  if (key[0] !== '*') return [key];
  return canBeMinor(term) ? [dfKey(0, term), dfKey(1, term)] : [dfKey(0, term)];
}

/** `POST /collections/{name}/points/count` body: the account's live points holding any of `values` in `lex_terms`. */
export function termCountBody(account: string, values: readonly string[]): Schemas['CountRequest'] {
  const match: Schemas['Match'] = values.length === 1 ? { value: values[0]! } : { any: [...values] };
  return { filter: { must: [...liveOf(account), { key: P.lexTerms, match }] }, exact: true };
}

/** How the cache reaches Qdrant (the client's `count` and `facet`). */
export interface StatsSource {
  count(body: Schemas['CountRequest']): Promise<number>;
  facet(body: Schemas['FacetRequest']): Promise<ReadonlyArray<{ value: unknown; count: number }>>;
}

/** Options of {@link CorpusStatsCache}. */
export interface CorpusStatsOptions {
  /** How long a figure is reused, in ms. @default 1000 */
  ttlMs?: number;
  /** Requests in flight at once. @default 16 */
  concurrency?: number;
  /**
   * Figures kept (the least recently used account goes first beyond it; an account that alone
   * holds more is not kept). @default 50000
   */
  maxEntries?: number;
  /** Clock in ms (tests). @default Date.now */
  now?: () => number;
}

interface Entry {
  at: number;
  value: Promise<number>;
}

/** Per-account cache of {@link CorpusStats} figures fetched from Qdrant (see the top of this file). */
export class CorpusStatsCache {
  /** Each account's figures by key, the account weighed by its figures. */
  private readonly accounts: LRUCache<string, Map<string, Entry>>;
  private readonly ttlMs: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly source: StatsSource,
    opts: CorpusStatsOptions = {},
  ) {
    this.ttlMs = Math.max(0, opts.ttlMs ?? 1000);
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 16));
    this.now = opts.now ?? Date.now;
    this.accounts = new LRUCache({ maxSize: Math.max(1, Math.floor(opts.maxEntries ?? 50_000)), sizeCalculation: (m) => Math.max(1, m.size) });
  }

  /**
   * The statistics of an account, with the document frequencies of `keys` (any other key
   * reads 0): what is cached and fresh, and the rest fetched in parallel.
   */
  async stats(account: string, keys: readonly DfKey[]): Promise<CorpusStats> {
    const docs = this.figure(account, '#docs', () => this.source.count(liveCountBody(account)));
    const tokens = this.figure(account, '#tokens', async () => tokensOf(await this.source.facet(lengthFacetBody(account))));
    const byKey = new Map<DfKey, Promise<number>>();
    for (const key of keys) {
      const values = termValues(key);
      byKey.set(key, this.figure(account, values.join('|'), () => this.source.count(termCountBody(account, values))));
    }
    const df = new Map<DfKey, number>();
    await Promise.all([...byKey].map(async ([k, p]) => df.set(k, await p)));
    return { docs: await docs, tokens: await tokens, df: (key) => df.get(key) ?? 0 };
  }

  /** Forget an account's figures (after a write to it). */
  invalidate(account: string): void {
    this.accounts.delete(account);
  }

  private figure(account: string, key: string, fetch: () => Promise<number>): Promise<number> {
    const m = this.accounts.get(account) ?? new Map<string, Entry>();
    const e = m.get(key);
    const now = this.now();
    if (e && now - e.at < this.ttlMs) return e.value;
    const value = this.limited(fetch);
    const entry = { at: now, value };
    m.set(key, entry);
    // Set again, so the account weighs the figures it holds now.
    this.accounts.set(account, m);
    // A failed request is not remembered (its account weighs it until its next figure).
    value.catch(() => {
      const cur = this.accounts.peek(account);
      if (cur?.get(key) === entry) cur.delete(key);
    });
    return value;
  }

  /** Run `fn` when fewer than `concurrency` requests are in flight (a finished one hands its place to the next waiting). */
  private async limited(fn: () => Promise<number>): Promise<number> {
    if (this.running >= this.concurrency) await new Promise<void>((go) => this.waiting.push(go));
    else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
