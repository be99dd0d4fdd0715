/**
 * Filter compilation (context-contract §1.8): request `filter`, `context_type`, `since`/`until`
 * and `tags` into one metadata filter tree in the stores' `FilterNode` shape, and the check of
 * that tree against what every VectorIndex adapter evaluates ({@link checkFilter}), which also
 * turns every time in it into ms since the epoch. `level` is parsed here too but is not part of
 * the filter.
 */
import { FILTER_FIELDS, type FilterFieldKind, type FilterNode, isFilterField } from '@ctxmesh/stores';
import { normalizeTags as normalizeKernelTags } from '@ctxmesh/kernel';
import { invalidArgument, kernelRule } from './errors';

/** Context types a filter may name. */
export const CONTEXT_TYPES = ['memory', 'resource', 'skill'] as const;

/** Exact message for a bad `context_type`. */
export const CONTEXT_TYPE_MESSAGE = 'context_type must be one or more of: memory, resource, skill';

/** Exact message when `since` is later than `until`. */
export const SINCE_UNTIL_MESSAGE = 'since must be earlier than or equal to until';

/** Which timestamp `since`/`until` apply to. */
export type TimeField = 'updated_at' | 'created_at';

/**
 * `context_type` (string, comma-separated string, or list of either): trimmed, lower-cased,
 * empties dropped, duplicates collapsed in first-seen order.
 * @returns the types, or null when none remain (no condition)
 * @throws DomainError INVALID_ARGUMENT ({@link CONTEXT_TYPE_MESSAGE})
 */
export function parseContextTypes(value: string | readonly string[] | null | undefined): string[] | null {
  if (value === null || value === undefined) return null;
  const parts = (typeof value === 'string' ? [value] : value).flatMap((v) => v.split(','));
  const out: string[] = [];
  for (const p of parts) {
    const t = p.trim().toLowerCase();
    if (t === '') continue;
    if (!(CONTEXT_TYPES as readonly string[]).includes(t)) throw invalidArgument(CONTEXT_TYPE_MESSAGE);
    if (!out.includes(t)) out.push(t);
  }
  return out.length ? out : null;
}

/**
 * `tags` (strict `k=v`): the kernel's `normalizeTags`, the rule the indexer applies to writes.
 * Each trimmed and lower-cased, exactly one `=`, key and value trimmed and non-empty. A
 * repeated key keeps its first position and takes the later value
 * (`["Env=Prod"," env=prod ","team=Search"]` → `["env=prod","team=search"]`).
 * @throws DomainError INVALID_ARGUMENT naming the offending tag
 */
export function normalizeTags(tags: readonly string[] | null | undefined): string[] {
  return kernelRule(() => normalizeKernelTags(tags));
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d+)([smhdw])$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** UTC ms of a calendar date/time, or NaN when a component is out of range. */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  // Date.UTC silently rolls 2026-02-30 over to March: compare the fields to reject it.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return NaN;
  if (h > 23 || mi > 59 || s > 59) return NaN;
  return t;
}

/**
 * One `since`/`until` bound as UTC ms: `\d+[smhdw]` = now minus N units; `YYYY-MM-DD` = start
 * of that day for `since`, its last millisecond for `until`; ISO-8601 date-time (a missing
 * offset means UTC; fractions beyond milliseconds are truncated).
 * @param nowMs the request's "now", ms since epoch
 * @returns ms since epoch, or null when `value` is absent/blank
 * @throws DomainError INVALID_ARGUMENT for anything unparsable
 */
export function parseTimeBound(value: string | null | undefined, bound: 'since' | 'until', nowMs: number): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  let t = NaN;
  let m: RegExpExecArray | null;
  if ((m = RELATIVE.exec(v))) {
    t = nowMs - Number(m[1]) * UNIT_MS[m[2]];
  } else if ((m = DATE_ONLY.exec(v))) {
    t = bound === 'since' ? utc(+m[1], +m[2], +m[3]) : utc(+m[1], +m[2], +m[3], 23, 59, 59, 999);
  } else if ((m = DATE_TIME.exec(v))) {
    const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
    t = utc(+m[1], +m[2], +m[3], +m[4], +m[5], m[6] ? +m[6] : 0, ms);
    if (m[9]) {
      const oh = +m[10];
      const om = +m[11];
      if (oh > 23 || om > 59) t = NaN;
      else t -= (m[9] === '+' ? 1 : -1) * (oh * 60 + om) * 60_000;
    }
  }
  // Dates outside the year range toISOString can render are not usable bounds either.
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) {
    throw invalidArgument(`Invalid ${bound} value '${value}': use a relative duration such as 30m, 12h, 7d or 2w, a date YYYY-MM-DD, or an ISO-8601 timestamp`);
  }
  return t;
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The time condition of `since`/`until`.
 * @param nowMs "now" in ms since epoch (injected so that relative bounds are testable)
 * @returns `{op:"time_range", field, gte?, lte?}`, or null with neither bound
 * @throws DomainError INVALID_ARGUMENT (unparsable bound, or {@link SINCE_UNTIL_MESSAGE})
 */
export function timeCondition(
  since: string | null | undefined,
  until: string | null | undefined,
  timeField: TimeField | null | undefined,
  nowMs: number,
): FilterNode | null {
  const gte = parseTimeBound(since, 'since', nowMs);
  const lte = parseTimeBound(until, 'until', nowMs);
  if (gte === null && lte === null) return null;
  if (gte !== null && lte !== null && gte > lte) throw invalidArgument(SINCE_UNTIL_MESSAGE);
  const node: { op: 'time_range'; field: string; gte?: string; lte?: string } = { op: 'time_range', field: timeField ?? 'updated_at' };
  if (gte !== null) node.gte = formatInstant(gte);
  if (lte !== null) node.lte = formatInstant(lte);
  return node;
}

/** Inputs of {@link compileFilter}. */
export interface FilterInputs {
  /** Request `filter` tree, passed through. */
  filter?: Record<string, unknown> | null;
  contextType?: string | readonly string[] | null;
  tags?: readonly string[] | null;
  since?: string | null;
  until?: string | null;
  timeField?: TimeField | null;
}

/** AND of `conds` with nested ANDs flattened; one condition bare; none → null. */
export function andAll(conds: readonly FilterNode[]): FilterNode | null {
  const flat: FilterNode[] = [];
  const isNode = (n: unknown): n is FilterNode => n !== null && typeof n === 'object' && !Array.isArray(n);
  const push = (n: FilterNode) => {
    // A client-sent {"op":"and"} without a list of nodes is passed on untouched for the check to judge.
    if (isNode(n) && n.op === 'and' && Array.isArray(n.conds) && n.conds.every(isNode)) n.conds.forEach(push);
    else flat.push(n);
  };
  conds.forEach(push);
  if (flat.length === 0) return null;
  return flat.length === 1 ? flat[0] : { op: 'and', conds: flat };
}

/**
 * `effective_filter` = AND of, in order: request `filter`, the `context_type` condition, the
 * time condition, one `search_tags` condition per tag.
 * @param nowMs "now" for relative `since`/`until`, ms since epoch
 * @throws DomainError INVALID_ARGUMENT for bad `context_type`, tags or times
 */
export function compileFilter(inputs: FilterInputs, nowMs: number): FilterNode | null {
  const conds: FilterNode[] = [];
  if (inputs.filter && Object.keys(inputs.filter).length > 0) conds.push(inputs.filter as unknown as FilterNode);
  const types = parseContextTypes(inputs.contextType);
  if (types) conds.push({ op: 'must', field: 'context_type', conds: types });
  const time = timeCondition(inputs.since, inputs.until, inputs.timeField, nowMs);
  if (time) conds.push(time);
  for (const tag of normalizeTags(inputs.tags)) conds.push({ op: 'must', field: 'search_tags', conds: [tag] });
  return andAll(conds);
}

/** Exact message for an unusable `level`. */
export const LEVEL_MESSAGE = 'level must be an integer, a comma-separated string of integers, or a list of integers';

/**
 * `level`: `2`, `"0,2"` or `[0,2]` → list of ints; empty (`""`, `[]`, null) → null.
 * @throws DomainError INVALID_ARGUMENT ({@link LEVEL_MESSAGE}) for a non-integer part
 */
export function parseLevels(level: number | string | readonly number[] | null | undefined): number[] | null {
  if (level === null || level === undefined) return null;
  let out: number[];
  if (typeof level === 'number') out = [level];
  else if (typeof level === 'string') {
    out = [];
    for (const part of level.split(',')) {
      const p = part.trim();
      if (p === '') continue;
      if (!/^[+-]?\d+$/.test(p)) throw invalidArgument(LEVEL_MESSAGE);
      out.push(Number.parseInt(p, 10));
    }
  } else out = [...level];
  return out.length ? out : null;
}

/** Nesting depth accepted in an effective filter (a deeper tree is almost certainly generated by mistake). */
export const MAX_FILTER_DEPTH = 16;
/** Nodes accepted in one effective filter. */
export const MAX_FILTER_NODES = 512;

const BOUNDS = ['gte', 'gt', 'lte', 'lt'] as const;

function fieldOf(node: Record<string, unknown>, where: string): [string, FilterFieldKind] {
  const f = node.field;
  if (!isFilterField(f)) {
    throw invalidArgument(`${where}: unsupported filter field ${JSON.stringify(f)}; supported: ${Object.keys(FILTER_FIELDS).join(', ')}`);
  }
  return [f, FILTER_FIELDS[f]];
}

function isTime(v: unknown): v is number | string {
  return (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && !Number.isNaN(Date.parse(v)));
}

function isNumber(v: unknown): boolean {
  return (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));
}

/** A time the check accepted, in ms since the epoch (a number already is; text is read as the stores read it). */
function timeMs(v: number | string): number {
  return typeof v === 'number' ? v : Date.parse(v);
}

/**
 * Check an effective filter (what {@link compileFilter} built, the request's own `filter` tree
 * included as the client sent it) and return it in the shape the mesh carries: unknown keys
 * dropped, numeric strings of `level` ranges as numbers, and every time — `time_range` bounds,
 * bounds and values of time fields — in ms since the epoch. The messages name the path of the
 * first problem (`filter.conds[1].gte: not a time: …`).
 * @throws DomainError INVALID_ARGUMENT (context-contract §1.8 `BAD_FILTER`) for a node that is not
 *   an object, an unknown op or field, a value of the wrong kind, or a tree deeper than
 *   {@link MAX_FILTER_DEPTH} or larger than {@link MAX_FILTER_NODES}
 */
export function checkFilter(raw: unknown, where = 'filter', depth = 0, budget = { nodes: 0 }): FilterNode {
  if (depth > MAX_FILTER_DEPTH) throw invalidArgument(`${where}: nested deeper than ${MAX_FILTER_DEPTH} levels`);
  if (++budget.nodes > MAX_FILTER_NODES) throw invalidArgument(`filter has more than ${MAX_FILTER_NODES} nodes`);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalidArgument(`${where}: a filter node must be an object`);
  const node = raw as Record<string, unknown>;
  const op = node.op;
  switch (op) {
    case 'and':
    case 'or': {
      if (!Array.isArray(node.conds)) throw invalidArgument(`${where}: ${op} needs a conds array`);
      return { op, conds: node.conds.map((c, i) => checkFilter(c, `${where}.conds[${i}]`, depth + 1, budget)) };
    }
    case 'must':
    case 'must_not': {
      const [field, kind] = fieldOf(node, where);
      if (!Array.isArray(node.conds)) throw invalidArgument(`${where}: ${op} needs a conds array of values`);
      const conds = node.conds as unknown[];
      conds.forEach((v, i) => {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw invalidArgument(`${where}.conds[${i}]: values must be strings, numbers or booleans`);
        }
        if (kind === 'int' && !isNumber(v)) throw invalidArgument(`${where}.conds[${i}]: ${field} values must be numbers`);
        if (kind === 'time' && !isTime(v)) throw invalidArgument(`${where}.conds[${i}]: ${field} values must be times`);
      });
      const values = kind === 'time' ? conds.map((v) => timeMs(v as number | string)) : (conds as Array<string | number | boolean>);
      return { op, field, conds: values };
    }
    case 'range':
    case 'time_range': {
      const [field, kind] = fieldOf(node, where);
      if (kind !== 'int' && kind !== 'time') throw invalidArgument(`${where}: ${op} needs a numeric or time field, got ${field}`);
      if (op === 'time_range' && kind !== 'time') throw invalidArgument(`${where}: time_range needs a time field, got ${field}`);
      const out: Record<string, unknown> = { op, field };
      for (const b of BOUNDS) {
        const v = node[b];
        if (v === undefined || v === null) continue;
        const ok = op === 'time_range' ? typeof v === 'string' && isTime(v) : kind === 'time' ? isTime(v) : isNumber(v);
        if (!ok) throw invalidArgument(`${where}.${b}: not a ${op === 'time_range' || kind === 'time' ? 'time' : 'number'}: ${JSON.stringify(v)}`);
        out[b] = kind === 'time' ? timeMs(v as number | string) : Number(v);
      }
      return out as FilterNode;
    }
    case 'prefix': {
      const [field, kind] = fieldOf(node, where);
      if (kind !== 'keyword' && kind !== 'tags') throw invalidArgument(`${where}: prefix needs a string field, got ${field}`);
      if (typeof node.prefix !== 'string') throw invalidArgument(`${where}: prefix must be a string`);
      return { op, field, prefix: node.prefix };
    }
    default:
      throw invalidArgument(`${where}: unsupported filter op ${JSON.stringify(op)}; supported: and, or, must, must_not, range, time_range, prefix`);
  }
}
