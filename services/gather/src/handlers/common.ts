/**
 * Request plumbing shared by gather's handlers: the caller scope from the wire identity, the
 * `as_of` instant, the filter tree in the stores' shape, and the one mapping from domain
 * failures to wire errors.
 */
import { EmbedderError } from '@ctxmesh/embedder';
import { isRequestRejection } from '@ctxmesh/kernel';
import { common } from '@ctxmesh/proto';
import { Code, CtxError, requireCaller } from '@ctxmesh/rpc';
import { isUnsupportedFilter } from '../domain/context';
import { reasonOf, RejectReason } from '../domain/rejections';
import { AccessDeniedError, type CallerScope, type FilterNode } from '@ctxmesh/stores';

/**
 * The caller scope of a request. An empty workspace means "no workspace restriction": list and
 * context modes search the whole account (workspaces scope retrieve, which sets one).
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user
 */
export function scopeOf(identity: common.Identity | undefined): CallerScope {
  return requireCaller(identity);
}

/**
 * The valid-time instant of a request in ms: absent means now (facts no longer valid are not
 * served by default).
 */
export function asOfMs(asOf: number | undefined, now: () => number): number {
  return asOf ?? now();
}

function filterValue(v: common.FilterValue): string | number | boolean {
  const k = v.kind;
  if (k === undefined) return '';
  return k.value;
}

/**
 * A wire filter tree in the stores' shape (absent = no filter). The gateway checked it against
 * the fields the stores filter on; a tree from another caller that names a field they do not
 * know is refused by the store itself (`UnsupportedFilterError` → BAD_FILTER).
 */
export function filterOf(w: common.FilterNode | undefined): FilterNode | null {
  const n = w?.node;
  if (n === undefined) return null;
  switch (n.$case) {
    case 'allOf':
      return { op: 'and', conds: n.value.conds.map((c) => filterOf(c)).filter((c): c is FilterNode => c !== null) };
    case 'anyOf':
      return { op: 'or', conds: n.value.conds.map((c) => filterOf(c)).filter((c): c is FilterNode => c !== null) };
    case 'must':
      return { op: 'must', field: n.value.field, conds: n.value.values.map(filterValue) };
    case 'mustNot':
      return { op: 'must_not', field: n.value.field, conds: n.value.values.map(filterValue) };
    case 'range': {
      const r = n.value;
      return { op: 'range', field: r.field, ...bounds(r.gte, r.gt, r.lte, r.lt) };
    }
    case 'timeRange': {
      const r = n.value;
      return { op: 'time_range', field: r.field, ...bounds(r.gteMs, r.gtMs, r.lteMs, r.ltMs) };
    }
    case 'prefix':
      return { op: 'prefix', field: n.value.field, prefix: n.value.prefix };
  }
}

function bounds(gte: number | undefined, gt: number | undefined, lte: number | undefined, lt: number | undefined): { gte?: number; gt?: number; lte?: number; lt?: number } {
  const out: { gte?: number; gt?: number; lte?: number; lt?: number } = {};
  if (gte !== undefined) out.gte = gte;
  if (gt !== undefined) out.gt = gt;
  if (lte !== undefined) out.lte = lte;
  if (lt !== undefined) out.lt = lt;
  return out;
}

/**
 * Map a domain failure to the error that goes on the wire: request rejections → INVALID_ARGUMENT
 * (message verbatim, so the gateway can show it as a 400), a forbidden target → PERMISSION_DENIED,
 * an unreachable embedder → UNAVAILABLE. Anything else is rethrown (the adapter makes it INTERNAL).
 */
export function toWireError(e: unknown): never {
  if (e instanceof CtxError) throw e;
  if (isRequestRejection(e)) throw new CtxError(Code.INVALID_ARGUMENT, reasonOf(e), e.message, { cause: e });
  if (isUnsupportedFilter(e)) throw new CtxError(Code.INVALID_ARGUMENT, RejectReason.BAD_FILTER, e.message, { cause: e });
  if (e instanceof AccessDeniedError) throw new CtxError(Code.PERMISSION_DENIED, 'ACCESS_DENIED', e.message, { cause: e, metadata: { uri: e.uri } });
  if (e instanceof EmbedderError && e.retryable) throw new CtxError(Code.UNAVAILABLE, 'EMBEDDER_UNAVAILABLE', 'the embedder is unavailable', { cause: e });
  throw e;
}
