import type { Schemas } from '@qdrant/js-client-rest';
import type { FieldSet, Visibility } from '../ports/vector-index';
import { liveCondition, underAnyCondition, uriReadFilter, visibilityConditions } from './filter';
import { contentSelector, denseOnly, fullSelector, summarySelector } from './payload';
import { P } from './schema';

/** Points per scroll page. @default 256 */
export const SCROLL_PAGE = 256;

type Offset = Schemas['ExtendedPointId'] | undefined;

function withOffset(body: Schemas['ScrollRequest'], offset: Offset): Schemas['ScrollRequest'] {
  return offset === undefined ? body : { ...body, offset };
}

/**
 * `POST /collections/{name}/points/scroll` body of `get`: live, visible points whose `uri` is
 * one of `uris` — the summary payload, `content` (with the overview and body) or `full`
 * (everything, the dense vector included). Explicit URIs count as targeted (root sees other users).
 */
export function getBody(uris: readonly string[], vis: Visibility, fields: FieldSet, offset?: Offset): Schemas['ScrollRequest'] {
  const full = fields === 'full';
  return withOffset(
    {
      filter: uriReadFilter(uris, vis),
      limit: SCROLL_PAGE,
      with_payload: full ? fullSelector() : fields === 'content' ? contentSelector() : summarySelector(false),
      with_vector: full ? denseOnly() : false,
    },
    offset,
  );
}

/** Scroll body of `vectors`: the dense vector (and the URI and written norm) of each URI. */
export function vectorsBody(uris: readonly string[], vis: Visibility, offset?: Offset): Schemas['ScrollRequest'] {
  return withOffset(
    {
      filter: uriReadFilter(uris, vis),
      limit: SCROLL_PAGE,
      with_payload: { include: [P.uri, P.vectorNorm] },
      with_vector: denseOnly(),
    },
    offset,
  );
}

/** Scroll body of `getDocument`: every live, visible point of a document, full payload and vector. */
export function documentBody(docUri: string, vis: Visibility, offset?: Offset): Schemas['ScrollRequest'] {
  return withOffset(
    {
      filter: { must: [liveCondition(), ...visibilityConditions(vis, true), { key: P.docUri, match: { value: docUri } }] },
      limit: SCROLL_PAGE,
      with_payload: fullSelector(),
      with_vector: denseOnly(),
    },
    offset,
  );
}

/** Scroll body of `exists`: at most one live, visible point equal to or under `uri` (ids only). */
export function existsBody(uri: string, vis: Visibility): Schemas['ScrollRequest'] {
  const must: Schemas['Condition'][] = [liveCondition(), ...visibilityConditions(vis, true)];
  const under = underAnyCondition([uri]);
  if (under) must.push(under);
  return { filter: { must }, limit: 1, with_payload: false, with_vector: false };
}

function statsFilter(account?: string): Schemas['Filter'] {
  const must: Schemas['Condition'][] = [liveCondition()];
  if (account !== undefined) must.push({ key: P.account, match: { value: account } });
  return { must };
}

/** `POST /collections/{name}/points/count` body of `stats`: live points (of one account). */
export function statsCountBody(account?: string): Schemas['CountRequest'] {
  return { filter: statsFilter(account), exact: true };
}

/**
 * `POST /collections/{name}/facet` body of `stats`: distinct `doc_uri` values of live points
 * (of one account); `limit` is the point count, which bounds the number of documents.
 */
export function statsFacetBody(points: number, account?: string): Schemas['FacetRequest'] {
  return { key: P.docUri, limit: Math.max(1, points), filter: statsFilter(account), exact: true };
}

/**
 * `POST /collections/{name}/facet` body of a whole-collection `stats`: the accounts holding live
 * points, with their point counts; `limit` is the point count, which bounds the number of accounts.
 */
export function statsAccountsBody(points: number): Schemas['FacetRequest'] {
  return { key: P.account, limit: Math.max(1, points), filter: statsFilter(), exact: true };
}
