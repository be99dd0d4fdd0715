import type { SearchQuery } from '../ports/vector-index';
import { defaultScopeRoots } from '../scope';
import { type RowPredicate, compileFilter, compileLevelsAsOf, compileVisibility } from './filter';
import { type ScanCache, Shard, type SlotRange } from './scan-cache';

/** One query's compiled scope. */
export interface Plan {
  shard: Shard | undefined;
  roots: string[];
  pred: RowPredicate;
  /** Sorted-part slot ranges under `roots`. */
  ranges: SlotRange[];
  /** Tail slots under `roots`. */
  tail: number[];
}

let empty: Shard | undefined;
/** Columns of no rows, to validate a filter for an account that has none. */
function emptyColumns(): Shard {
  empty ??= new Shard('', 4, false);
  return empty;
}


/**
 * Compile a search's scope against the scan cache: the caller's shard, the target roots (the
 * default scope roots when none), the row predicate (visibility, filter, levels, `asOf`) and
 * the slot ranges under the roots.
 * @throws UnsupportedFilterError for a filter the index cannot evaluate (also on an empty account)
 */
export function planQuery(q: SearchQuery, cache: ScanCache): Plan {
  const shard = cache.shards.get(q.visibility.account);
  const targets = (q.targets ?? []).filter((t) => typeof t === 'string' && t.trim() !== '').map((t) => t.trim());
  const roots = targets.length > 0 ? targets : defaultScopeRoots(q.visibility);
  if (!shard) {
    // Still validate the filter, so a bad filter fails the same way on an empty account.
    if (q.filter) compileFilter(q.filter, cache.dict, emptyColumns());
    return { shard, roots, pred: () => false, ranges: [], tail: [] };
  }
  const vis = compileVisibility(q.visibility, cache.dict, targets.length > 0, shard);
  const filt = q.filter ? compileFilter(q.filter, cache.dict, shard) : null;
  const la = compileLevelsAsOf(q, shard);
  const pred: RowPredicate = filt && la ? (s) => vis(s) && la(s) && filt(s) : filt ? (s) => vis(s) && filt(s) : la ? (s) => vis(s) && la(s) : vis;
  return { shard, roots, pred, ranges: shard.rangesUnder(roots), tail: shard.tailUnder(roots) };
}

