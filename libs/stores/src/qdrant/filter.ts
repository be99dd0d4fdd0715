import type { Schemas } from '@qdrant/js-client-rest';
import { UnsupportedFilterError } from '../ports/errors';
import { defaultScopeRoots } from '../scope';
import { FILTER_FIELDS, type FilterField, type FilterFieldKind, type FilterNode, isFilterField, type SearchQuery, type Visibility } from '../ports/vector-index';
import { normalizePrefix } from './payload';
import { P, STATE_LIVE } from './schema';
import { filterNumber, filterTime } from '../filter-values';

type Condition = Schemas['Condition'];
type Filter = Schemas['Filter'];

/** Matches every point (an empty conjunction). */
export const MATCH_ALL: Filter = Object.freeze({ must: [] }) as Filter;

/**
 * Matches no point: every point has a non-empty `uri`, so "uri is empty" is never true.
 * (An empty `should` would match everything in Qdrant, so an empty OR needs this instead.)
 */
export const MATCH_NONE: Condition = Object.freeze({ is_empty: { key: P.uri } }) as Condition;

/** The payload key of each filterable field ({@link FILTER_FIELDS}, context-contract §1.8 spelling); the kind is the table's. */
const KEYS: Readonly<Record<FilterField, string>> = {
  context_type: P.contextType,
  category: P.category,
  subject: P.subject,
  workspace: P.workspace,
  search_tags: P.tags,
  tags: P.tags,
  uri: P.uri,
  doc_uri: P.docUri,
  level: P.level,
  updated_at: P.updatedAt,
  created_at: P.createdAt,
  valid_from: P.validFrom,
  valid_to: P.validTo,
};

function field(name: unknown): { key: string; kind: FilterFieldKind } {
  if (!isFilterField(name)) throw new UnsupportedFilterError(`unsupported filter field ${JSON.stringify(name)}; supported: ${Object.keys(FILTER_FIELDS).join(', ')}`);
  return { key: KEYS[name], kind: FILTER_FIELDS[name] };
}

function numValue(v: unknown, kind: FilterFieldKind, what: string): number {
  return kind === 'time' ? filterTime(v, what) : filterNumber(v, what);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/**
 * One {@link FilterNode} as a Qdrant condition, with the embedded index's semantics:
 * - `and` → `must` (empty: everything); `or` → `should` (empty: nothing);
 * - `must` → `match.any` of the values (for tags: trimmed, lower-cased; any tag matches),
 *   `must_not` → the same under `must_not`; an empty value list matches nothing / everything;
 *   integer fields (`level`, times in ms) drop values that no stored integer can equal;
 * - `range` → a numeric range (time fields accept ms or ISO strings), `time_range` the same on
 *   a time field with ISO strings; a null field (open validity) never satisfies a bound;
 * - `prefix` on `uri` → the point's `uri_prefixes` contain the prefix: path semantics (the
 *   prefix itself or anything under `prefix/`); a prefix ending inside a path segment is not
 *   supported by the index and only matches at segment boundaries.
 * @throws UnsupportedFilterError for an unknown op or field, or an unparsable value
 */
export function filterCondition(node: FilterNode): Condition {
  if (node === null || typeof node !== 'object') throw new UnsupportedFilterError('filter node must be an object');
  const op = (node as { op?: unknown }).op;
  switch (op) {
    case 'and':
    case 'or': {
      const conds = (node as { conds?: unknown }).conds;
      if (!Array.isArray(conds)) throw new UnsupportedFilterError(`${op}: conds must be an array`);
      const parts = conds.map((c) => filterCondition(c as FilterNode));
      if (op === 'and') return { must: parts };
      return parts.length === 0 ? MATCH_NONE : { should: parts };
    }
    case 'must':
    case 'must_not': {
      const n = node as { field?: unknown; conds?: unknown };
      if (!Array.isArray(n.conds)) throw new UnsupportedFilterError(`${op}: conds must be an array`);
      const f = field(n.field);
      let values: Array<string | number>;
      if (f.kind === 'keyword') values = n.conds.map((v) => String(v));
      else if (f.kind === 'tags') values = n.conds.map((v) => String(v).trim().toLowerCase());
      else values = n.conds.map((v) => numValue(v, f.kind, `${op} ${String(n.field)}`)).filter((x) => Number.isInteger(x));
      const unique = [...new Set(values)];
      if (unique.length === 0) return op === 'must' ? MATCH_NONE : MATCH_ALL;
      const match: Schemas['Match'] =
        typeof unique[0] === 'string' ? { any: unique as string[] } : { any: unique as number[] };
      const cond: Condition = { key: f.key, match };
      return op === 'must' ? cond : { must_not: [cond] };
    }
    case 'range':
    case 'time_range': {
      const n = node as { field?: unknown; gte?: unknown; gt?: unknown; lte?: unknown; lt?: unknown };
      const f = field(n.field);
      if (f.kind !== 'int' && f.kind !== 'time') throw new UnsupportedFilterError(`${op}: field '${String(n.field)}' is not numeric`);
      if (op === 'time_range' && f.kind !== 'time') throw new UnsupportedFilterError(`time_range: field '${String(n.field)}' is not a time`);
      const conv = (v: unknown, w: string): number =>
        op === 'time_range' ? filterTime(v, `time_range ${w}`) : numValue(v, f.kind, `range ${w}`);
      const range: Schemas['Range'] = {};
      if (present(n.gte)) range.gte = conv(n.gte, 'gte');
      if (present(n.gt)) range.gt = conv(n.gt, 'gt');
      if (present(n.lte)) range.lte = conv(n.lte, 'lte');
      if (present(n.lt)) range.lt = conv(n.lt, 'lt');
      return { key: f.key, range };
    }
    case 'prefix': {
      const n = node as { field?: unknown; prefix?: unknown };
      if (typeof n.prefix !== 'string') throw new UnsupportedFilterError('prefix: prefix must be a string');
      if (n.field !== 'uri') throw new UnsupportedFilterError(`prefix: only the 'uri' field supports prefixes, got ${JSON.stringify(n.field)}`);
      const p = normalizePrefix(n.prefix);
      if (p === '' || p === 'viking://') return MATCH_ALL;
      return { key: P.uriPrefixes, match: { value: p } };
    }
    default:
      throw new UnsupportedFilterError(`unsupported filter op ${JSON.stringify(op)}`);
  }
}

/**
 * Tenant conditions, built on the server from the caller's identity (never from client URIs):
 * - `account` always;
 * - `workspace` when the visibility names one;
 * - unless `allUsers` and the read is `targeted` (explicit URIs or targets): account-wide points
 *   (`owner` "") or the caller's own points, of which peer subtrees only the actor peer's
 *   (`peer` "" or the actor), or every peer with `openPeers`.
 */
export function visibilityConditions(vis: Visibility, targeted: boolean): Condition[] {
  const out: Condition[] = [{ key: P.account, match: { value: vis.account } }];
  if (vis.workspace !== null) out.push({ key: P.workspace, match: { value: vis.workspace } });
  if (vis.allUsers && targeted) return out;
  const mine: Condition = { key: P.owner, match: { value: vis.user } };
  const own: Condition = vis.openPeers
    ? mine
    : {
        must: [
          mine,
          vis.actorPeer
            ? { key: P.peer, match: { any: ['', vis.actorPeer] } }
            : { key: P.peer, match: { value: '' } },
        ],
      };
  out.push({ should: [{ key: P.owner, match: { value: '' } }, own] });
  return out;
}

/** Only points of a switched-on document version (see the replace protocol). */
export function liveCondition(): Condition {
  return { key: P.state, match: { value: STATE_LIVE } };
}

/**
 * Valid-time condition: `valid_from ≤ asOf < valid_to`, a null (open) bound always passing.
 * `is_empty` covers both an explicit null and a missing key.
 */
export function asOfCondition(asOf: number): Condition {
  return {
    must: [
      { should: [{ is_empty: { key: P.validFrom } }, { key: P.validFrom, range: { lte: asOf } }] },
      { should: [{ is_empty: { key: P.validTo } }, { key: P.validTo, range: { gt: asOf } }] },
    ],
  };
}

/** Points equal to or under any of the URIs (`viking://` alone: no constraint → null). */
export function underAnyCondition(uris: readonly string[]): Condition | null {
  const prefixes = [...new Set(uris.map(normalizePrefix))];
  if (prefixes.length === 0 || prefixes.includes('viking://')) return null;
  return { key: P.uriPrefixes, match: { any: prefixes } };
}

/**
 * The whole filter of one search: live points, tenant conditions, targets (or the default
 * scope), levels, valid time and the caller's metadata filter — all evaluated by Qdrant.
 */
export function searchFilter(q: SearchQuery): Filter {
  const targeted = q.targets.length > 0;
  const must: Condition[] = [liveCondition(), ...visibilityConditions(q.visibility, targeted)];
  const scope = underAnyCondition(targeted ? q.targets : defaultScopeRoots(q.visibility));
  if (scope) must.push(scope);
  if (q.levels && q.levels.length > 0) must.push({ key: P.level, match: { any: [...new Set(q.levels)] } });
  if (q.asOf !== null && q.asOf !== undefined) must.push(asOfCondition(q.asOf));
  if (q.filter) must.push(filterCondition(q.filter));
  return { must };
}

/** Filter of a read by explicit URIs (`get`, `vectors`): live, visible, `uri` one of them. */
export function uriReadFilter(uris: readonly string[], vis: Visibility): Filter {
  return {
    must: [liveCondition(), ...visibilityConditions(vis, true), { key: P.uri, match: { any: [...new Set(uris)] } }],
  };
}
