/**
 * search_context (§1.7): a lexical search over the ledger's blocks (text = stored summary) and
 * every hidden original (owned by the earliest block or prune that covers it). The score is a
 * hybrid of 0.7 × normalised BM25 over lightly stemmed terms (CJK as unigrams plus bigrams)
 * and 0.3 × character-trigram coverage of the query. There is no score threshold: every
 * document with a positive score is a hit, best first, so the caller sees the scores.
 */
import type { Role, SessionView } from './projection';
import { isCjkCodePoint } from './tokens';

/** Default number of hits. */
export const DEFAULT_SEARCH_LIMIT = 5;
/** Largest number of hits one call returns. */
export const MAX_SEARCH_LIMIT = 50;
/** Preview length, in characters (code points). */
export const PREVIEW_CHARS = 160;

const BM25_WEIGHT = 0.7;
const FUZZY_WEIGHT = 0.3;
const K1 = 1.2;
const B = 0.75;

/** One searchable document. */
export interface SearchDoc {
  kind: 'block' | 'message';
  /** Owning block (or prune) id: pass it to Decompress. */
  blockId: string;
  /** Seq (messages). */
  seq?: number;
  /** Role (messages). */
  role?: Role;
  text: string;
}

/** One hit. */
export interface SearchHit {
  kind: 'block' | 'message';
  blockId: string;
  seq?: number;
  role?: Role;
  /** Hybrid score in (0, 1], rounded to 6 decimals. */
  score: number;
  /** First {@link PREVIEW_CHARS} characters, whitespace collapsed. */
  preview: string;
}

function normalize(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}

/** A light suffix stemmer (plural, -ing, -ed, -ly) so "tests", "tested", "testing" meet. */
export function stem(w: string): string {
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ing') && w.length > 5) return w.slice(0, -3);
  if (w.endsWith('ed') && w.length > 4) return w.slice(0, -2);
  if (w.endsWith('ly') && w.length > 4) return w.slice(0, -2);
  if (w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** Search terms of a text: stemmed words; CJK runs as unigrams and bigrams. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const m of normalize(text).matchAll(/[\p{L}\p{N}_]+/gu)) {
    let word = '';
    let cjk: string[] = [];
    const flushWord = () => {
      if (word) out.push(stem(word));
      word = '';
    };
    const flushCjk = () => {
      for (let i = 0; i < cjk.length; i++) {
        out.push(cjk[i]!);
        if (i + 1 < cjk.length) out.push(cjk[i]! + cjk[i + 1]!);
      }
      cjk = [];
    };
    for (const ch of m[0]) {
      if (isCjkCodePoint(ch.codePointAt(0)!)) {
        flushWord();
        cjk.push(ch);
      } else {
        flushCjk();
        word += ch;
      }
    }
    flushWord();
    flushCjk();
  }
  return out;
}

function collapse(s: string): string {
  return normalize(s).replace(/\s+/g, ' ').trim();
}

function trigrams(s: string): Set<string> {
  const cps = Array.from(s);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= cps.length; i++) out.add(cps.slice(i, i + 3).join(''));
  return out;
}

/** Preview of a text: whitespace collapsed, first {@link PREVIEW_CHARS} code points. */
export function previewOf(text: string): string {
  return Array.from(text.replace(/\s+/g, ' ').trim()).slice(0, PREVIEW_CHARS).join('');
}

interface IndexedDoc {
  doc: SearchDoc;
  tf: Map<string, number>;
  length: number;
  flat: string;
  grams: Set<string>;
}

/** An immutable index over a corpus; build once per log snapshot. */
export class SearchIndex {
  private readonly docs: IndexedDoc[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(corpus: readonly SearchDoc[]) {
    this.docs = corpus.map((doc) => {
      const tf = new Map<string, number>();
      const ts = terms(doc.text);
      for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
      const flat = collapse(doc.text);
      return { doc, tf, length: ts.length, flat, grams: trigrams(flat) };
    });
    for (const d of this.docs) for (const t of d.tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    const total = this.docs.reduce((a, d) => a + d.length, 0);
    this.avgLength = this.docs.length > 0 ? total / this.docs.length : 0;
  }

  /** Number of documents. */
  get size(): number {
    return this.docs.length;
  }

  /**
   * Search.
   * @param query an empty or whitespace-only query gives no hits
   * @param limit hits wanted; ≤ 0 or non-finite means {@link DEFAULT_SEARCH_LIMIT}; capped at {@link MAX_SEARCH_LIMIT}
   */
  search(query: string, limit?: number): SearchHit[] {
    const want = limit === undefined || !Number.isFinite(limit) || limit <= 0 ? DEFAULT_SEARCH_LIMIT : Math.min(MAX_SEARCH_LIMIT, Math.trunc(limit));
    const flatQuery = collapse(query);
    if (flatQuery === '' || this.docs.length === 0) return [];
    const qTerms = [...new Set(terms(query))];
    const qGrams = trigrams(flatQuery);
    const n = this.docs.length;
    const bm25 = this.docs.map((d) => {
      let s = 0;
      for (const t of qTerms) {
        const f = d.tf.get(t);
        if (!f) continue;
        const df = this.df.get(t)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / (this.avgLength || 1)));
      }
      return s;
    });
    const maxBm25 = Math.max(0, ...bm25);
    const scored: Array<{ i: number; score: number }> = [];
    this.docs.forEach((d, i) => {
      let fuzzy: number;
      if (qGrams.size === 0) fuzzy = d.flat.includes(flatQuery) ? 1 : 0;
      else {
        let hit = 0;
        for (const g of qGrams) if (d.grams.has(g)) hit++;
        fuzzy = hit / qGrams.size;
      }
      const lexical = maxBm25 > 0 ? bm25[i]! / maxBm25 : 0;
      const score = Math.round((BM25_WEIGHT * lexical + FUZZY_WEIGHT * fuzzy) * 1e6) / 1e6;
      if (score > 0) scored.push({ i, score });
    });
    // Corpus order breaks ties, so the same log and query always give the same hits.
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    return scored.slice(0, want).map(({ i, score }) => {
      const { doc } = this.docs[i]!;
      return {
        kind: doc.kind,
        blockId: doc.blockId,
        ...(doc.seq !== undefined ? { seq: doc.seq } : {}),
        ...(doc.role !== undefined ? { role: doc.role } : {}),
        score,
        preview: previewOf(doc.text),
      };
    });
  }
}

/**
 * The corpus of a view: one block document per ledger entry (in log order), then one message
 * document per hidden original with non-empty text (by seq), owned by the earliest covering
 * block or prune. Checkpoints hidden by a distillation are represented by their block's
 * document, not repeated as messages.
 */
export function buildCorpus(view: SessionView): SearchDoc[] {
  const docs: SearchDoc[] = view.blocks.map((b) => ({ kind: 'block' as const, blockId: b.blockId, text: b.summary }));
  const owners = view.owners();
  const seqs = [...owners.keys()].sort((a, b) => a - b);
  for (const seq of seqs) {
    if (view.posOf(seq) !== undefined || !view.isMessage(seq)) continue;
    const info = view.node(seq);
    if (info.checkpoint || info.text.trim() === '') continue;
    docs.push({ kind: 'message', blockId: owners.get(seq)!, seq, role: info.role, text: info.text });
  }
  return docs;
}
