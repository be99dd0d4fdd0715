import type { Schemas } from '@qdrant/js-client-rest';
import type { NodeContent, NodeContextType, NodeRecord, NodeSummary } from '../ports/vector-index';
import { lexicalPayload } from './lexical';
import { DENSE_VECTOR, P, STATE_STAGED } from './schema';

/** A payload as the adapter writes it (every key of {@link P}). */
export type PointPayload = Record<(typeof P)[keyof typeof P], unknown>;

/**
 * Normalise a target or subtree URI for prefix matching: trailing slashes removed
 * (`viking://resources/` → `viking://resources`), the bare scheme kept as `viking://`.
 */
export function normalizePrefix(uri: string): string {
  const trimmed = uri.replace(/\/+$/, '');
  return trimmed === 'viking:' || trimmed === 'viking:/' ? 'viking://' : trimmed;
}

/**
 * Every path prefix of a URI at `/` boundaries after the scheme, ending with the URI itself:
 * `viking://user/u/memories/a.md` → `viking://user`, `viking://user/u`,
 * `viking://user/u/memories`, `viking://user/u/memories/a.md`. A point is under target `T`
 * exactly when `normalizePrefix(T)` is one of these (the embedded index's path semantics).
 */
export function uriPrefixes(uri: string): string[] {
  const norm = normalizePrefix(uri);
  const scheme = norm.indexOf('://');
  if (scheme < 0) return [norm];
  const head = norm.slice(0, scheme + 3);
  const parts = norm.slice(scheme + 3).split('/').filter((s) => s !== '');
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) out.push(head + parts.slice(0, i).join('/'));
  return out.length ? out : [norm];
}

/**
 * The text indexed lexically for a record, as the embedded index chooses it: `lexicalText`
 * when non-blank, else the body (when it equals the abstract) or abstract + body.
 */
export function lexicalSourceOf(r: Pick<NodeRecord, 'lexicalText' | 'abstract' | 'body'>): string {
  if (r.lexicalText && r.lexicalText.trim() !== '') return r.lexicalText;
  return r.abstract === r.body ? r.body : `${r.abstract}\n${r.body}`;
}

/** L2 norm of a vector. */
export function l2norm(v: Float32Array): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  return Math.sqrt(n);
}

/**
 * The payload of one point of document version `version`, written `staged` (see the replace
 * protocol in `writes.ts`). Normalised like the embedded index: tags trimmed and lower-cased,
 * an empty workspace stored as `default`; times are truncated to whole ms.
 */
export function toPayload(r: NodeRecord, version: string): PointPayload {
  const lex = lexicalPayload(lexicalSourceOf(r));
  return {
    [P.uri]: r.uri,
    [P.docUri]: r.docUri,
    [P.parentUri]: r.parentUri ?? '',
    [P.uriPrefixes]: uriPrefixes(r.uri),
    [P.contextType]: r.contextType,
    [P.category]: r.category ?? '',
    [P.level]: r.level,
    [P.account]: r.account,
    [P.owner]: r.owner ?? '',
    [P.peer]: r.peer ?? '',
    [P.workspace]: r.workspace || 'default',
    [P.subject]: r.subject ?? '',
    [P.tags]: (r.tags ?? []).map((t) => t.trim().toLowerCase()),
    // Integer ms: Qdrant's integer index ignores fractional numbers.
    [P.createdAt]: Math.trunc(r.createdAt),
    [P.updatedAt]: Math.trunc(r.updatedAt),
    [P.validFrom]: r.validFrom === null || r.validFrom === undefined ? null : Math.trunc(r.validFrom),
    [P.validTo]: r.validTo === null || r.validTo === undefined ? null : Math.trunc(r.validTo),
    [P.title]: r.title ?? '',
    [P.abstract]: r.abstract ?? '',
    [P.overview]: r.overview ?? '',
    [P.body]: r.body ?? '',
    [P.contentHash]: r.contentHash,
    [P.passageIndex]: r.passageIndex ?? 0,
    [P.links]: [...(r.links ?? [])],
    [P.lexicalText]: r.lexicalText ?? '',
    [P.lexCounts]: lex.counts,
    [P.lexTerms]: lex.terms,
    [P.lexLenBits]: lex.lengthBits,
    [P.vectorNorm]: l2norm(r.vector),
    [P.version]: version,
    [P.state]: STATE_STAGED,
  };
}

/** Payload keys of a {@link NodeSummary}: what gather needs, no body, vector or overview. */
export const SUMMARY_KEYS: readonly string[] = Object.freeze([
  P.uri,
  P.docUri,
  P.parentUri,
  P.contextType,
  P.category,
  P.level,
  P.account,
  P.owner,
  P.peer,
  P.workspace,
  P.subject,
  P.tags,
  P.createdAt,
  P.updatedAt,
  P.validFrom,
  P.validTo,
  P.title,
  P.abstract,
  P.contentHash,
  P.passageIndex,
  P.links,
]);

/**
 * Payload selector for search hits and `get(…, 'summary')`: only the small keys (plus the
 * overview when asked), so a gather round trip never carries bodies.
 */
export function summarySelector(withOverview = false): Schemas['WithPayloadInterface'] {
  return { include: withOverview ? [...SUMMARY_KEYS, P.overview] : [...SUMMARY_KEYS] };
}

/** Payload selector for full reads (tier-reader, `getDocument`): everything but write bookkeeping. */
export function fullSelector(): Schemas['WithPayloadInterface'] {
  return { exclude: [P.uriPrefixes, P.lexCounts, P.lexTerms, P.lexLenBits, P.version, P.state] };
}

/** Payload selector for content reads (a tier's text): the summary, overview and body. */
export function contentSelector(): Schemas['WithPayloadInterface'] {
  return { include: [...SUMMARY_KEYS, P.overview, P.body] };
}

/** Vector selector for full reads: the dense vector only (the sparse one is derived from text). */
export function denseOnly(): Schemas['WithVector'] {
  return [DENSE_VECTOR];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function numOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const CONTEXT_TYPES = new Set<NodeContextType>(['memory', 'resource', 'skill']);

/** Summary fields of a returned payload (missing keys read as empty). */
export function toSummary(payload: Record<string, unknown> | null | undefined, withOverview = false): NodeSummary {
  const p = payload ?? {};
  const ct = str(p[P.contextType]) as NodeContextType;
  const out: NodeSummary = {
    uri: str(p[P.uri]),
    docUri: str(p[P.docUri]),
    parentUri: str(p[P.parentUri]),
    contextType: CONTEXT_TYPES.has(ct) ? ct : 'resource',
    category: str(p[P.category]),
    level: num(p[P.level]),
    account: str(p[P.account]),
    owner: str(p[P.owner]),
    peer: str(p[P.peer]),
    workspace: str(p[P.workspace]),
    subject: str(p[P.subject]),
    tags: strings(p[P.tags]),
    createdAt: num(p[P.createdAt]),
    updatedAt: num(p[P.updatedAt]),
    validFrom: numOrNull(p[P.validFrom]),
    validTo: numOrNull(p[P.validTo]),
    title: str(p[P.title]),
    abstract: str(p[P.abstract]),
    contentHash: str(p[P.contentHash]),
    passageIndex: num(p[P.passageIndex]),
    links: strings(p[P.links]),
  };
  if (withOverview) out.overview = str(p[P.overview]);
  return out;
}

/**
 * The dense vector of a returned point (named or unnamed form), scaled back to its written
 * norm when known (Qdrant returns cosine vectors unit-length), or null.
 */
export function denseOf(vector: unknown, norm?: unknown): Float32Array | null {
  let raw: unknown = vector;
  if (vector && typeof vector === 'object' && !Array.isArray(vector)) raw = (vector as Record<string, unknown>)[DENSE_VECTOR];
  if (!Array.isArray(raw)) return null;
  const out = Float32Array.from(raw as number[]);
  if (typeof norm === 'number' && Number.isFinite(norm) && norm > 0) {
    const cur = l2norm(out);
    if (cur > 0) {
      const k = norm / cur;
      for (let i = 0; i < out.length; i++) out[i]! *= k;
    }
  }
  return out;
}

/** A content record from a point read with {@link contentSelector}. */
export function toContent(payload: Record<string, unknown> | null | undefined): NodeContent {
  const p = payload ?? {};
  return { ...toSummary(p, false), overview: str(p[P.overview]), body: str(p[P.body]) };
}

/** A full record from a point read with {@link fullSelector} and {@link denseOnly}. */
export function toRecord(payload: Record<string, unknown> | null | undefined, vector: unknown, dimension: number): NodeRecord {
  const p = payload ?? {};
  const s = toSummary(p, false);
  return {
    ...s,
    overview: str(p[P.overview]),
    body: str(p[P.body]),
    vector: denseOf(vector, p[P.vectorNorm]) ?? new Float32Array(dimension),
    lexicalText: str(p[P.lexicalText]),
  };
}
