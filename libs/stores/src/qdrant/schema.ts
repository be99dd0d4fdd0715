import type { Schemas } from '@qdrant/js-client-rest';

/** Name of the dense vector in every point. */
export const DENSE_VECTOR = 'dense';
/** Name of the sparse lexical vector (shared tokenizer terms, IDF applied by Qdrant). */
export const LEXICAL_VECTOR = 'lexical';

/**
 * Payload keys of a point. Times are integers (ms since epoch) so one integer index serves
 * equality and ranges; `valid_from`/`valid_to` are null for an open bound.
 */
export const P = {
  uri: 'uri',
  docUri: 'doc_uri',
  parentUri: 'parent_uri',
  /** Every path prefix of `uri` (`viking://a`, `viking://a/b`, …, the URI itself): targets and subtrees. */
  uriPrefixes: 'uri_prefixes',
  contextType: 'context_type',
  category: 'category',
  level: 'level',
  account: 'account',
  owner: 'owner',
  peer: 'peer',
  workspace: 'workspace',
  subject: 'subject',
  tags: 'tags',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  validFrom: 'valid_from',
  validTo: 'valid_to',
  title: 'title',
  abstract: 'abstract',
  overview: 'overview',
  body: 'body',
  contentHash: 'content_hash',
  passageIndex: 'passage_index',
  links: 'links',
  lexicalText: 'lexical_text',
  /** The lexical text's term counts (`encodeTermCounts`): what the shared ranking reads of a point. */
  lexCounts: 'lex_counts',
  /** The lexical text's distinct terms by class (`0:<main term>`, `1:<minor term>`): document frequencies are counts on it. */
  lexTerms: 'lex_terms',
  /** The set bits of the point's BM25 length (`"0"`, `"3"`, …): a facet on it sums the account's lengths. */
  lexLenBits: 'lex_len_bits',
  /** L2 norm of the dense vector as written (Qdrant stores cosine vectors normalised). */
  vectorNorm: 'vector_norm',
  /** Version of the document the point belongs to (its content hash): the unit of the replace protocol. */
  version: 'version',
  /** `staged` while a new document version is being written, `live` once it is switched on. */
  state: 'state',
} as const;

/** Values of the `state` payload key. */
export const STATE_STAGED = 'staged';
/** Only `live` points are ever returned by reads. */
export const STATE_LIVE = 'live';

/** Options of {@link createCollectionBody}. */
export interface CollectionOptions {
  /** Dense dimension. */
  dimension: number;
  /** Keep dense vectors on disk (memory-mapped) instead of RAM. @default false */
  vectorsOnDisk?: boolean;
  /** Keep payloads (bodies) on disk; indexed fields stay in RAM either way. @default true */
  payloadOnDisk?: boolean;
}

/**
 * `PUT /collections/{name}` body: a named dense vector (cosine) and a sparse lexical vector
 * whose weights are sublinear term frequencies, with Qdrant applying IDF at query time
 * (`modifier: idf`): the lexical leg's candidates come from it (their order is the shared
 * ranking's BM25, computed from each point's term counts).
 */
export function createCollectionBody(opts: CollectionOptions): Schemas['CreateCollection'] {
  if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
  return {
    vectors: {
      [DENSE_VECTOR]: { size: opts.dimension, distance: 'Cosine', on_disk: opts.vectorsOnDisk ?? false },
    },
    sparse_vectors: {
      [LEXICAL_VECTOR]: { modifier: 'idf', index: { on_disk: false } },
    },
    on_disk_payload: opts.payloadOnDisk ?? true,
  };
}

/**
 * One `PUT /collections/{name}/index` body per filtered payload key, in creation order.
 * `account` is the tenant key (`is_tenant`: Qdrant co-locates each account's points);
 * keyword keys get exact-match indexes (the lexical statistics' keys too: counts and facets on
 * them are the ranking's document frequencies and lengths), integer keys (level, times in ms)
 * lookup + range indexes.
 */
export function payloadIndexBodies(): Schemas['CreateFieldIndex'][] {
  const keyword = (field_name: string, is_tenant = false): Schemas['CreateFieldIndex'] => ({
    field_name,
    field_schema: is_tenant ? { type: 'keyword', is_tenant: true } : { type: 'keyword' },
  });
  // Lookup (exact match) and range on every integer key: filters use both (`must` on a time
  // value, `range` on a level).
  const integer = (field_name: string): Schemas['CreateFieldIndex'] => ({
    field_name,
    field_schema: { type: 'integer', lookup: true, range: true },
  });
  return [
    keyword(P.account, true),
    keyword(P.owner),
    keyword(P.peer),
    keyword(P.workspace),
    keyword(P.subject),
    keyword(P.uri),
    keyword(P.docUri),
    keyword(P.uriPrefixes),
    keyword(P.contextType),
    keyword(P.category),
    keyword(P.tags),
    keyword(P.contentHash),
    keyword(P.version),
    keyword(P.state),
    // The statistics of the shared ranking (see `stats.ts`): counted and faceted, never a search
    // filter, so no filtered-HNSW links; the terms' index, an inverted index of every term, on disk.
    { field_name: P.lexTerms, field_schema: { type: 'keyword', on_disk: true, enable_hnsw: false } },
    { field_name: P.lexLenBits, field_schema: { type: 'keyword', enable_hnsw: false } },
    integer(P.level),
    integer(P.createdAt),
    integer(P.updatedAt),
    integer(P.validFrom),
    integer(P.validTo),
  ];
}
