import { createHash } from 'node:crypto';
import type { Schemas } from '@qdrant/js-client-rest';
import type { NodeRecord } from '../ports/vector-index';
import { underAnyCondition } from './filter';
import { pointId } from './ids';
import { documentSparseVector } from './lexical';
import { lexicalSourceOf, normalizePrefix, toPayload } from './payload';
import { DENSE_VECTOR, LEXICAL_VECTOR, P, STATE_LIVE, STATE_STAGED } from './schema';

/*
 * Replace protocol — how a document is swapped without anything half-written being searchable.
 *
 * Qdrant has no multi-point transactions, so a version of a document is made visible by one
 * payload flip instead of by its writes:
 *
 *   1. upsert the new version's points with `state: "staged"` (ids = UUIDv5 of account, URI and
 *      version = content hash, so they never collide with the live version's points). Every read filters
 *      on `state = "live"`, so staged points are invisible however many upsert chunks it takes
 *      and however a writer dies in the middle;
 *   2. one `POST /points/batch` with ordered operations: `set_payload {state: "live"}` on the
 *      document's staged points of the new version, then `delete` of the document's points of
 *      any other version (the old one, and leftovers of an earlier interrupted write), then
 *      `delete` of other documents' points that held one of the new URIs (a URI moves).
 *
 * A reader sees the old version before step 2 and the new one after it. Inside step 2 (between
 * its two operations) a reader can briefly see both versions, never a part of one; reads drop a
 * repeated URI, keeping its best hit. Retrying a write is idempotent: the same content gives the
 * same ids, so a redelivered ingest message re-stages the same points and flips again. Nothing
 * changes when every stored point of the document is live with the new version (the embedded
 * index's rule).
 *
 * Tenancy: a document is (account, doc_uri). Point ids hash the account, every condition of
 * steps 1–2 includes it, and so does every delete: two accounts holding the same URI never
 * touch each other's points.
 */

/** Points per upsert request; a long document is staged in several requests. @default 128 */
export const UPSERT_CHUNK = 128;

/**
 * Version id of a document's records: their content hash when they share one (the normal
 * case), else a SHA-1 over their distinct hashes, so every distinct content gets its own ids.
 */
export function versionOf(records: readonly NodeRecord[]): string {
  const hashes = [...new Set(records.map((r) => r.contentHash))].sort();
  if (hashes.length === 1) return hashes[0]!;
  return `mixed:${createHash('sha1').update(hashes.join('\u0000')).digest('hex')}`;
}

/** One point of a record: deterministic id, dense + sparse vectors, staged payload. */
export function pointOf(r: NodeRecord, version: string): Schemas['PointStruct'] {
  const vector: Record<string, Schemas['Vector']> = { [DENSE_VECTOR]: Array.from(r.vector) };
  const sparse = documentSparseVector(lexicalSourceOf(r));
  // A point without lexical terms simply has no sparse vector (named vectors may be absent).
  if (sparse.indices.length > 0) vector[LEXICAL_VECTOR] = { indices: sparse.indices, values: sparse.values };
  return { id: pointId(r.account, r.uri, version), vector, payload: toPayload(r, version) };
}

/** Step 1: `PUT /collections/{name}/points` bodies staging a document version, in chunks. */
export function stageBodies(records: readonly NodeRecord[], version: string, chunk = UPSERT_CHUNK): Schemas['PointInsertOperations'][] {
  const out: Schemas['PointInsertOperations'][] = [];
  for (let i = 0; i < records.length; i += chunk) out.push({ points: records.slice(i, i + chunk).map((r) => pointOf(r, version)) });
  return out;
}

function docConditions(account: string, docUri: string): Schemas['Condition'][] {
  return [
    { key: P.account, match: { value: account } },
    { key: P.docUri, match: { value: docUri } },
  ];
}

/**
 * Step 1 for a batch of documents: `PUT /collections/{name}/points` bodies staging each
 * document's version, the points of all documents in chunks of `chunk`.
 */
export function stageBatchBodies(docs: ReadonlyArray<{ records: readonly NodeRecord[]; version: string }>, chunk = UPSERT_CHUNK): Schemas['PointInsertOperations'][] {
  const points = docs.flatMap((d) => d.records.map((r) => pointOf(r, d.version)));
  const out: Schemas['PointInsertOperations'][] = [];
  for (let i = 0; i < points.length; i += chunk) out.push({ points: points.slice(i, i + chunk) });
  return out;
}

/**
 * Step 2: `POST /collections/{name}/points/batch` body, three ordered operations: switch the
 * staged version on; delete every other version of the document; delete points of other
 * documents of the account that held one of the new URIs (a URI moves to its new document).
 */
export function commitBody(account: string, docUri: string, version: string, uris: readonly string[]): Schemas['UpdateOperations'] {
  const ver: Schemas['Condition'] = { key: P.version, match: { value: version } };
  return {
    operations: [
      {
        set_payload: {
          payload: { [P.state]: STATE_LIVE },
          filter: { must: [...docConditions(account, docUri), ver, { key: P.state, match: { value: STATE_STAGED } }] },
        },
      },
      { delete: { filter: { must: docConditions(account, docUri), must_not: [ver] } } },
      {
        delete: {
          filter: {
            must: [
              { key: P.account, match: { value: account } },
              { key: P.uri, match: { any: [...new Set(uris)] } },
            ],
            must_not: [{ key: P.docUri, match: { value: docUri } }],
          },
        },
      },
    ],
  };
}

/**
 * `POST /collections/{name}/points/scroll` body listing what is stored for a document (version
 * and state only), to skip a write whose content is already live.
 * @param pageSize points per page
 */
export function currentVersionBody(account: string, docUri: string, pageSize = 256, offset?: Schemas['ExtendedPointId']): Schemas['ScrollRequest'] {
  const body: Schemas['ScrollRequest'] = {
    filter: { must: docConditions(account, docUri) },
    limit: pageSize,
    with_payload: { include: [P.version, P.state] },
    with_vector: false,
  };
  if (offset !== undefined) body.offset = offset;
  return body;
}

/**
 * `POST /collections/{name}/points/scroll` body listing what is stored for several documents of
 * one account (document URI, version and state only), to skip those already live.
 * @param pageSize points per page
 */
export function currentVersionsBody(account: string, docUris: readonly string[], pageSize = 256, offset?: Schemas['ExtendedPointId']): Schemas['ScrollRequest'] {
  const body: Schemas['ScrollRequest'] = {
    filter: {
      must: [
        { key: P.account, match: { value: account } },
        { key: P.docUri, match: { any: [...new Set(docUris)] } },
      ],
    },
    limit: pageSize,
    with_payload: { include: [P.docUri, P.version, P.state] },
    with_vector: false,
  };
  if (offset !== undefined) body.offset = offset;
  return body;
}

/**
 * True when the stored points (from {@link currentVersionBody}) are all live points of
 * `version` — the embedded index's "nothing to do" rule (same content hash everywhere).
 */
export function isCurrent(points: ReadonlyArray<{ payload?: Record<string, unknown> | null }>, version: string): boolean {
  return points.length > 0 && points.every((p) => p.payload?.[P.version] === version && p.payload?.[P.state] === STATE_LIVE);
}

/**
 * Points of `account`'s document `uri` and its point whose URI is `uri` — with `subtree` also
 * every point of the account under `uri/` — in every state (staged leftovers go too): the
 * filter of `deleteDocument`. Other accounts' points with the same URIs never match.
 */
export function deleteFilter(account: string, uri: string, subtree: boolean): Schemas['Filter'] {
  const u = normalizePrefix(uri);
  const tenant: Schemas['Condition'] = { key: P.account, match: { value: account } };
  const doc: Schemas['Condition'] = { key: P.docUri, match: { value: u } };
  if (subtree) {
    const under = underAnyCondition([u]);
    // `viking://` alone: everything of the account.
    return under ? { must: [tenant], should: [doc, under] } : { must: [tenant] };
  }
  return { must: [tenant], should: [doc, { key: P.uri, match: { value: u } }] };
}

/** `POST /collections/{name}/points/delete` body for {@link deleteFilter}. */
export function deleteBody(account: string, uri: string, subtree: boolean): Schemas['PointsSelector'] {
  return { filter: deleteFilter(account, uri, subtree) };
}

/** `POST /collections/{name}/points/count` body counting what {@link deleteBody} removes. */
export function deleteCountBody(account: string, uri: string, subtree: boolean): Schemas['CountRequest'] {
  return { filter: deleteFilter(account, uri, subtree), exact: true };
}
