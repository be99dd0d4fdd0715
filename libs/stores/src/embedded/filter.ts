import { UnsupportedFilterError } from '../ports/errors';
import { FILTER_FIELDS, type FilterField, type FilterNode, isFilterField, type SearchQuery, type Visibility } from '../ports/vector-index';
import { filterNumber, filterTime } from '../filter-values';

/**
 * Interned string dictionary: every low-cardinality string column (context type, category,
 * owner, peer, workspace, subject, tags) is stored as a small integer code.
 */
export class Dictionary {
  private readonly codes = new Map<string, number>();
  private readonly strings: string[] = [];

  /** Code of `s`, assigning the next free code when new. */
  intern(s: string): number {
    let c = this.codes.get(s);
    if (c === undefined) {
      c = this.strings.length;
      this.codes.set(s, c);
      this.strings.push(s);
    }
    return c;
  }

  /** Code of `s`, or -1 when it was never interned (so it matches no row). */
  lookup(s: string): number {
    return this.codes.get(s) ?? -1;
  }

  /** The string of a code. */
  str(code: number): string {
    return this.strings[code];
  }

  /** Codes of every interned string satisfying `test`. */
  matching(test: (s: string) => boolean): Set<number> {
    const out = new Set<number>();
    this.strings.forEach((s, i) => {
      if (test(s)) out.add(i);
    });
    return out;
  }
}

/** Columnar row metadata the predicates read (one entry per slot). */
export interface FilterColumns {
  uri: string[];
  docUri: string[];
  contextType: Int32Array;
  category: Int32Array;
  level: Int32Array;
  owner: Int32Array;
  peer: Int32Array;
  workspace: Int32Array;
  subject: Int32Array;
  tags: Int32Array[];
  createdAt: Float64Array;
  updatedAt: Float64Array;
  /** NaN = open start. */
  validFrom: Float64Array;
  /** NaN = open end. */
  validTo: Float64Array;
}

/** A compiled row test over one shard's columns (bound at compile time: compile after the last write). */
export type RowPredicate = (slot: number) => boolean;

const TRUE: RowPredicate = () => true;
const FALSE: RowPredicate = () => false;

type CodeField = 'contextType' | 'category' | 'owner' | 'peer' | 'workspace' | 'subject';
type NumField = 'level' | 'createdAt' | 'updatedAt' | 'validFrom' | 'validTo';
type StrField = 'uri' | 'docUri';

type Column = { kind: 'code'; col: CodeField } | { kind: 'num'; col: NumField } | { kind: 'str'; col: StrField } | { kind: 'tags' };

/** Where each filterable field ({@link FILTER_FIELDS}, context-contract §1.8 spelling) lives in the scan cache. */
const FIELDS: Readonly<Record<FilterField, Column>> = {
  context_type: { kind: 'code', col: 'contextType' },
  category: { kind: 'code', col: 'category' },
  subject: { kind: 'code', col: 'subject' },
  workspace: { kind: 'code', col: 'workspace' },
  search_tags: { kind: 'tags' },
  tags: { kind: 'tags' },
  uri: { kind: 'str', col: 'uri' },
  doc_uri: { kind: 'str', col: 'docUri' },
  level: { kind: 'num', col: 'level' },
  updated_at: { kind: 'num', col: 'updatedAt' },
  created_at: { kind: 'num', col: 'createdAt' },
  valid_from: { kind: 'num', col: 'validFrom' },
  valid_to: { kind: 'num', col: 'validTo' },
};

/** A field's column, and for a numeric one whether its values are times (the table's kind). */
function field(name: string): Column & { time: boolean } {
  if (!isFilterField(name)) throw new UnsupportedFilterError(`unsupported filter field '${name}'; supported: ${Object.keys(FILTER_FIELDS).join(', ')}`);
  return { ...FIELDS[name], time: FILTER_FIELDS[name] === 'time' };
}

function numValue(v: unknown, time: boolean, what: string): number {
  return time ? filterTime(v, what) : filterNumber(v, what);
}

/** Numeric bound test; NaN (a null column) never satisfies a bound. */
function rangePredicate(arr: Float64Array | Int32Array, lo: number | undefined, loIncl: boolean, hi: number | undefined, hiIncl: boolean): RowPredicate {
  return (s) => {
    const x = arr[s];
    if (Number.isNaN(x)) return false;
    if (lo !== undefined && (loIncl ? x < lo : x <= lo)) return false;
    if (hi !== undefined && (hiIncl ? x > hi : x >= hi)) return false;
    return true;
  };
}

function boundsOf(node: { gte?: unknown; gt?: unknown; lte?: unknown; lt?: unknown }, conv: (v: unknown, w: string) => number): [number | undefined, boolean, number | undefined, boolean] {
  let lo: number | undefined;
  let loIncl = true;
  let hi: number | undefined;
  let hiIncl = true;
  if (node.gte !== undefined && node.gte !== null) lo = conv(node.gte, 'gte');
  if (node.gt !== undefined && node.gt !== null) {
    const v = conv(node.gt, 'gt');
    if (lo === undefined || v >= lo) {
      lo = v;
      loIncl = false;
    }
  }
  if (node.lte !== undefined && node.lte !== null) hi = conv(node.lte, 'lte');
  if (node.lt !== undefined && node.lt !== null) {
    const v = conv(node.lt, 'lt');
    if (hi === undefined || v <= hi) {
      hi = v;
      hiIncl = false;
    }
  }
  return [lo, loIncl, hi, hiIncl];
}

/**
 * Compile a {@link FilterNode} tree into a row predicate.
 * - `and` of nothing is true, `or` of nothing is false;
 * - `must` matches when the field equals any listed value (for tags: when any tag does);
 *   `must_not` when it equals none;
 * - `range` compares numbers (time fields take ms since epoch), `time_range` takes ISO-8601
 *   strings; a null column (open validity end) never satisfies a bound;
 * - `prefix` is a plain string prefix test (for path semantics use search `targets`).
 * @throws UnsupportedFilterError for an unknown op or field, or an unparsable value
 */
export function compileFilter(node: FilterNode | null | undefined, dict: Dictionary, c: FilterColumns): RowPredicate {
  if (node === null || node === undefined) return TRUE;
  if (typeof node !== 'object') throw new UnsupportedFilterError('filter node must be an object');
  const op = (node as { op?: unknown }).op;
  switch (op) {
    case 'and':
    case 'or': {
      const conds = (node as { conds?: unknown }).conds;
      if (!Array.isArray(conds)) throw new UnsupportedFilterError(`${op}: conds must be an array`);
      const parts = conds.map((x) => compileFilter(x as FilterNode, dict, c));
      if (parts.length === 0) return op === 'and' ? TRUE : FALSE;
      if (parts.length === 1) return parts[0];
      return op === 'and' ? (s) => parts.every((p) => p(s)) : (s) => parts.some((p) => p(s));
    }
    case 'must':
    case 'must_not': {
      const n = node as { field: string; conds?: unknown };
      if (!Array.isArray(n.conds)) throw new UnsupportedFilterError(`${op}: conds must be an array`);
      const f = field(n.field);
      let test: RowPredicate;
      if (f.kind === 'code') {
        const codes = new Set(n.conds.map((v) => dict.lookup(String(v))));
        const arr = c[f.col];
        test = codes.size === 1 ? ((one) => (s: number) => arr[s] === one)([...codes][0]) : (s) => codes.has(arr[s]);
      } else if (f.kind === 'tags') {
        const codes = new Set(n.conds.map((v) => dict.lookup(String(v).trim().toLowerCase())));
        const tags = c.tags;
        test = (s) => {
          const t = tags[s];
          for (let i = 0; i < t.length; i++) if (codes.has(t[i])) return true;
          return false;
        };
      } else if (f.kind === 'str') {
        const values = new Set(n.conds.map((v) => String(v)));
        const arr = c[f.col];
        test = (s) => values.has(arr[s]);
      } else {
        const values = new Set(n.conds.map((v) => numValue(v, f.time, `${op} ${n.field}`)));
        const arr = c[f.col];
        test = (s) => values.has(arr[s]);
      }
      return op === 'must' ? test : (s) => !test(s);
    }
    case 'range':
    case 'time_range': {
      const n = node as { field: string; gte?: unknown; gt?: unknown; lte?: unknown; lt?: unknown };
      const f = field(n.field);
      if (f.kind !== 'num') throw new UnsupportedFilterError(`${op}: field '${n.field}' is not numeric`);
      if (op === 'time_range' && !f.time) throw new UnsupportedFilterError(`time_range: field '${n.field}' is not a time`);
      const conv = op === 'time_range' ? (v: unknown, w: string) => filterTime(v, `time_range ${w}`) : (v: unknown, w: string) => numValue(v, f.time, `range ${w}`);
      const [lo, loIncl, hi, hiIncl] = boundsOf(n, conv);
      return rangePredicate(c[f.col], lo, loIncl, hi, hiIncl);
    }
    case 'prefix': {
      const n = node as { field: string; prefix?: unknown };
      if (typeof n.prefix !== 'string') throw new UnsupportedFilterError('prefix: prefix must be a string');
      const f = field(n.field);
      const p = n.prefix;
      if (f.kind === 'str') {
        const arr = c[f.col];
        return (s) => arr[s].startsWith(p);
      }
      if (f.kind === 'code') {
        const codes = dict.matching((x) => x.startsWith(p));
        const arr = c[f.col];
        return (s) => codes.has(arr[s]);
      }
      if (f.kind === 'tags') {
        const codes = dict.matching((x) => x.startsWith(p));
        const tags = c.tags;
        return (s) => tags[s].some((t) => codes.has(t));
      }
      throw new UnsupportedFilterError(`prefix: field '${n.field}' is not a string`);
    }
    default:
      throw new UnsupportedFilterError(`unsupported filter op ${JSON.stringify(op)}`);
  }
}

/** True when `uri` equals `prefix` or lies under it (path semantics). */
export function isUnderPrefix(uri: string, prefix: string): boolean {
  const p = prefix.length > 'viking://'.length && prefix.endsWith('/') ? prefix.replace(/\/+$/, '') : prefix;
  if (p === 'viking://' || p === 'viking:/') return uri.startsWith('viking://');
  return uri === p || uri.startsWith(p + '/');
}

/**
 * Visibility of a row to `vis` (context-contract §2.4 and the port's {@link Visibility}):
 * - the account is enforced by the caller (rows are partitioned by account);
 * - workspace must match when `vis.workspace` is set;
 * - account-wide rows (`owner` "") are visible;
 * - the caller's own rows are visible, except peer subtrees: only the actor peer's,
 *   or every peer with `openPeers`;
 * - other users' rows only with `allUsers` and only when `targeted` (an explicit target covers them).
 */
export function compileVisibility(vis: Visibility, dict: Dictionary, targeted: boolean, c: FilterColumns): RowPredicate {
  const ws = vis.workspace === null ? -2 : dict.lookup(vis.workspace);
  const empty = dict.lookup('');
  const me = dict.lookup(vis.user);
  const actor = vis.actorPeer ? dict.lookup(vis.actorPeer) : -3;
  const open = vis.openPeers;
  const others = vis.allUsers && targeted;
  const wsCol = c.workspace;
  const ownerCol = c.owner;
  const peerCol = c.peer;
  return (s) => {
    if (ws !== -2 && wsCol[s] !== ws) return false;
    const owner = ownerCol[s];
    if (owner === empty) return true;
    if (owner === me) {
      const peer = peerCol[s];
      return peer === empty || open || peer === actor;
    }
    return others;
  };
}

/** Levels and valid-time checks of a query (`levels`, `asOf`) as one predicate. */
export function compileLevelsAsOf(q: Pick<SearchQuery, 'levels' | 'asOf'>, c: FilterColumns): RowPredicate | null {
  const levels = q.levels && q.levels.length > 0 ? new Set(q.levels) : null;
  const asOf = q.asOf === null || q.asOf === undefined ? null : q.asOf;
  if (!levels && asOf === null) return null;
  const levelCol = c.level;
  const fromCol = c.validFrom;
  const toCol = c.validTo;
  return (s) => {
    if (levels && !levels.has(levelCol[s])) return false;
    if (asOf !== null) {
      const from = fromCol[s];
      const to = toCol[s];
      if (!Number.isNaN(from) && from > asOf) return false;
      if (!Number.isNaN(to) && asOf >= to) return false;
    }
    return true;
  };
}
