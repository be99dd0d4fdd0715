/**
 * VectorIndex port: node payloads, dense vectors and a lexical index, searched hybrid
 * (dense + lexical, fused). Adapters: embedded (SQLite + sqlite-vec + a block-max inverted index) and Qdrant.
 * One contract suite (`../contract/vector-index.contract.ts`) runs against both.
 *
 * Tenancy: the account is not part of a `viking://` URI (context-contract §2), and the
 * account-wide scopes (`viking://resources/…`, `viking://agent/…`) exist once per account. So a
 * point is identified by (account, uri) and a document by (account, docUri): two accounts may
 * hold the same URI independently, and no call of one account reads, replaces or deletes
 * another account's points.
 */

import type { RelevanceFeatures } from '../ranking/relevance';
import type { TermCounts } from '../ranking/terms';

/** memory | resource | skill. */
export type NodeContextType = 'memory' | 'resource' | 'skill';

/** One indexed point: a whole node, a directory sidecar, or a passage of a document. */
export interface NodeRecord {
  /** Indexed URI: the node, a sidecar (`D/.abstract.md`) or a passage (`doc#p3`). */
  uri: string;
  /** Document the point belongs to: the node URI for whole nodes and sidecars' directory files. */
  docUri: string;
  /** Parent directory URI. */
  parentUri: string;
  /** memory, resource or skill. */
  contextType: NodeContextType;
  /** Declared category (events, …, resources, skills, memories). */
  category: string;
  /** 0 = abstract sidecar, 1 = overview sidecar, 2 = file or passage. */
  level: number;
  /** Tenant account. */
  account: string;
  /** Owning user ("" for account-wide scopes: resources, agent). */
  owner: string;
  /** Peer id when under `{user_root}/peers/{peer}`, else "". */
  peer: string;
  /** Workspace slug ("default" when none). */
  workspace: string;
  /** End-user subject of a memory ("" when none). */
  subject: string;
  /** Normalised `k=v` tags. */
  tags: string[];
  /** Creation time, ms since epoch. */
  createdAt: number;
  /** Last update time, ms since epoch. */
  updatedAt: number;
  /** Start of validity (ms since epoch) or null for an open start. */
  validFrom: number | null;
  /** End of validity (ms, exclusive) or null for an open end. */
  validTo: number | null;
  /** Title (first heading or file name). */
  title: string;
  /** Abstract (≤ 256 chars for documents; the whole body for memories). */
  abstract: string;
  /** Overview (§4.4). */
  overview: string;
  /** Full body (or the passage text). */
  body: string;
  /** Hash of the document content this point was built from. */
  contentHash: string;
  /** Passage ordinal within its document (0 for whole nodes). */
  passageIndex: number;
  /** viking:// URIs linked from the body (graph assist). */
  links: string[];
  /** Dense vector (dimension fixed per index). */
  vector: Float32Array;
  /** Text indexed lexically (defaults to abstract + body when empty). */
  lexicalText: string;
  /**
   * The lexical term counts of `lexicalText` — `lexicalTermCounts(lexicalText)` of
   * `@ctxmesh/embedder` — when the writer has counted them already (the indexer's record threads
   * do, off the event loop). The embedded index stores these instead of tokenising `lexicalText`
   * again; it ignores them when `lexicalText` is blank (abstract + body is indexed then). Never
   * returned by reads.
   */
  lexicalCounts?: TermCounts;
}

/** The small fields gather needs; bodies stay in the store until the tier-reader asks. */
export type NodeSummary = Omit<NodeRecord, 'body' | 'vector' | 'lexicalText' | 'overview'> & {
  /** Overview, included only when asked for. */
  overview?: string;
};

/** What a tier read needs of a point: its summary, overview and body (no vectors, no lexical text). */
export type NodeContent = Omit<NodeRecord, 'vector' | 'lexicalText'>;

/**
 * Which nodes a caller may see. Built by the server from the caller's identity, never
 * from client URIs.
 */
export interface Visibility {
  /** Account; always enforced. */
  account: string;
  /** Calling user: sees its own user space plus account-wide scopes. */
  user: string;
  /** Actor peer: the only peer subtree visible, unless `openPeers`. */
  actorPeer: string | null;
  /** Open context (actor cleared for a peer scan): every peer of the user is visible. */
  openPeers: boolean;
  /** Root/admin: other users' spaces are visible when targeted explicitly. */
  allUsers: boolean;
  /** Workspace to restrict to; null = every workspace. */
  workspace: string | null;
}

/**
 * Metadata filter tree (context-contract §1.8 plus the user `filter`):
 * - `{op:"and"|"or", conds:[…]}`
 * - `{op:"must"|"must_not", field, conds:[values]}` (field in context_type, category, search_tags, uri, level, …)
 * - `{op:"range", field, gte?, gt?, lte?, lt?}` (numbers; time fields in ms since the epoch)
 * - `{op:"time_range", field:"updated_at"|"created_at", gte?, lte?}` (ISO strings or ms since the epoch)
 * - `{op:"prefix", field:"uri", prefix}`
 */
export type FilterNode =
  | { op: 'and' | 'or'; conds: FilterNode[] }
  | { op: 'must' | 'must_not'; field: string; conds: Array<string | number | boolean> }
  | { op: 'range'; field: string; gte?: number; gt?: number; lte?: number; lt?: number }
  | { op: 'time_range'; field: string; gte?: string | number; lte?: string | number; gt?: string | number; lt?: string | number }
  | { op: 'prefix'; field: string; prefix: string };

/** Kind of a filterable field: what its values are and which ops apply. */
export type FilterFieldKind = 'keyword' | 'tags' | 'int' | 'time';

/**
 * The fields every VectorIndex adapter can filter on, by kind: the one table of them (the
 * gateway checks filters against it; each adapter maps every field onto its own column or
 * payload key, typed so that a field it does not map fails to compile).
 */
export const FILTER_FIELDS = Object.freeze({
  context_type: 'keyword',
  category: 'keyword',
  subject: 'keyword',
  workspace: 'keyword',
  search_tags: 'tags',
  tags: 'tags',
  uri: 'keyword',
  doc_uri: 'keyword',
  level: 'int',
  updated_at: 'time',
  created_at: 'time',
  valid_from: 'time',
  valid_to: 'time',
} as const satisfies Record<string, FilterFieldKind>);

/** A filterable field's name (see {@link FILTER_FIELDS}). */
export type FilterField = keyof typeof FILTER_FIELDS;

/** True when `name` is a filterable field. */
export function isFilterField(name: unknown): name is FilterField {
  return typeof name === 'string' && Object.hasOwn(FILTER_FIELDS, name);
}

/** One hybrid search. */
export interface SearchQuery {
  /** Who is asking. */
  visibility: Visibility;
  /** Dense query vector, or null to skip the dense leg. */
  vector: Float32Array | null;
  /** Lexical query text ("" skips the lexical leg). */
  text: string;
  /** URI prefixes to search under; empty = the visibility's default scope. */
  targets: string[];
  /** Metadata filter, or null. */
  filter: FilterNode | null;
  /** Rows wanted, or documents with `documents`. */
  limit: number;
  /**
   * `limit` counts documents: a passage (`docUri ≠ uri`) counts as its document. The search
   * ranks the pool of rows a caller collapsing passages itself would ask for (`documentPool`:
   * `limit + min(2 × limit, 200)`) and returns its hits up to the first row of the `limit + 1`-th
   * document, so collapsing them gives the same documents and scores as collapsing the whole
   * pool, without reading or sending the rest. @default false
   */
  documents?: boolean;
  /** Minimum calibrated score, when set. */
  scoreThreshold?: number | null;
  /** Levels to keep; empty or absent = all. */
  levels?: number[];
  /** Valid-time instant (ms); only nodes with validFrom ≤ asOf < validTo. Null = no check. */
  asOf?: number | null;
  /** Also return each hit's overview. */
  withOverview?: boolean;
}

/** A search hit. */
export interface SearchHit {
  /** Summary fields of the point. */
  node: NodeSummary;
  /** Calibrated relevance in (0, 1): 0.35 is the noise floor (`ranking/relevance.ts`). */
  score: number;
  /** The evidence the score was computed from (what the bench fits the model on). */
  features?: RelevanceFeatures;
  /**
   * For a passage hit of a search counting documents (`SearchQuery.documents`) whose document
   * point did not hit itself: that point (a summary, with its overview when `withOverview`),
   * when visible to the search. An engine may leave it out (the Qdrant adapter does); the caller
   * then reads it with `get`.
   */
  document?: NodeSummary;
}

/** The document a point belongs to when it is a passage, else null. */
export function passageDocOf(node: Pick<NodeSummary, 'uri' | 'docUri'>): string | null {
  return node.docUri && node.docUri !== node.uri ? node.docUri : null;
}

/** Document URIs that `hits` need read to collapse their passages: passages whose document point did not hit. */
export function missingDocuments(hits: readonly SearchHit[]): string[] {
  const present = new Set<string>();
  const wanted = new Set<string>();
  for (const h of hits) {
    const doc = passageDocOf(h.node);
    if (doc === null) present.add(h.node.uri);
    else wanted.add(doc);
  }
  return [...wanted].filter((d) => !present.has(d));
}

/**
 * Which fields `get` returns: `summary` ({@link NodeSummary}), `content` ({@link NodeContent}:
 * the summary with overview and body, for reading tiers) or `full` ({@link NodeRecord}, with
 * the dense vector and the lexical text).
 */
export type FieldSet = 'summary' | 'content' | 'full';

/** Counts for stats and benches. */
export interface IndexStats {
  /** Points. */
  points: number;
  /** Distinct documents, i.e. distinct (account, docUri) pairs. */
  documents: number;
}

/** The port. */
export interface VectorIndex {
  /** Dense dimension of the index. */
  readonly dimension: number;
  /**
   * Replace every point of document (account, `docUri`) atomically with `records`, or do nothing
   * when the stored points of that document already carry the same `contentHash`. The records
   * must be non-empty and share `docUri` and one `account`, which names the document; a URI held
   * by another document of the same account moves to this one. Nothing half-written is ever
   * searchable, and other accounts' points are never touched.
   * @returns true when something changed
   * @throws InvalidRecordError (before writing anything) for an empty list, records of another
   *   document or of several accounts, a missing account, a bad URI or a wrong vector length
   */
  replaceDocument(docUri: string, records: NodeRecord[]): Promise<boolean>;
  /**
   * {@link replaceDocument} for several documents in one store write: one transaction on the
   * embedded index (all documents or none), one staged upsert and one commit batch on Qdrant
   * (each document atomic; a failure part-way may leave some documents of the batch replaced,
   * and retrying them is idempotent). Every document is validated before anything is written,
   * and applied in order, so a later document of the batch sees the earlier ones. Nothing
   * half-written is ever searchable.
   * @returns per document, true when something changed
   * @throws InvalidRecordError (before writing anything) when any document's records do not fit
   */
  replaceDocuments(docs: ReadonlyArray<{ docUri: string; records: NodeRecord[] }>): Promise<boolean[]>;
  /**
   * Delete `account`'s document `uri` (its points, and the point whose URI is `uri`); with
   * `subtree`, every point of the account whose URI or document URI lies under `uri/` as well.
   * Other accounts' points with the same URIs stay.
   * @param account tenant whose points are deleted (required: an empty account is refused)
   * @returns points removed
   * @throws InvalidRecordError when `account` is empty
   */
  deleteDocument(account: string, uri: string, opts?: { subtree?: boolean }): Promise<number>;
  /** Run searches; results aligned with `queries`, best first. */
  search(queries: SearchQuery[]): Promise<SearchHit[][]>;
  /** Points of `visibility.account` by indexed URI (null where missing or invisible). */
  get(uris: string[], visibility: Visibility, fields: FieldSet): Promise<Array<NodeRecord | NodeContent | NodeSummary | null>>;
  /** Every point of document (`visibility.account`, `docUri`) in passage order (empty when missing or invisible). */
  getDocument(docUri: string, visibility: Visibility): Promise<NodeRecord[]>;
  /** Dense vectors of `visibility.account`'s points by indexed URI (for MMR), null where missing or invisible. */
  vectors(uris: string[], visibility: Visibility): Promise<Array<Float32Array | null>>;
  /** True when a visible point of `visibility.account` has this URI or lives under `uri/`. */
  exists(uri: string, visibility: Visibility): Promise<boolean>;
  /** Point and document counts of one account, or of the whole index (documents counted per (account, docUri)). */
  stats(account?: string): Promise<IndexStats>;
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
