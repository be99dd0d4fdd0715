/**
 * The effective filter (context-contract §1.8, checked by `domain/filter.ts` `checkFilter`) as
 * the mesh carries it: `ctxmesh.common.v1.FilterNode`, times in ms since the epoch.
 */
import type { common } from '@ctxmesh/proto';
import type { FilterNode } from '@ctxmesh/stores';

function value(v: string | number | boolean): common.FilterValue {
  if (typeof v === 'string') return { kind: { $case: 'text', value: v } };
  if (typeof v === 'number') return { kind: { $case: 'number', value: v } };
  return { kind: { $case: 'flag', value: v } };
}

/** A checked time bound in ms (a text bound only reaches here from a caller that skipped the check). */
function ms(v: string | number | undefined): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'number' ? v : Date.parse(v);
}

/** A filter tree as `common.FilterNode`; null → absent (no filter). */
export function filterToWire(node: FilterNode | null): common.FilterNode | undefined {
  if (node === null) return undefined;
  switch (node.op) {
    case 'and':
      return { node: { $case: 'allOf', value: { conds: node.conds.map((c) => filterToWire(c)!) } } };
    case 'or':
      return { node: { $case: 'anyOf', value: { conds: node.conds.map((c) => filterToWire(c)!) } } };
    case 'must':
      return { node: { $case: 'must', value: { field: node.field, values: node.conds.map(value) } } };
    case 'must_not':
      return { node: { $case: 'mustNot', value: { field: node.field, values: node.conds.map(value) } } };
    case 'range':
      return { node: { $case: 'range', value: { field: node.field, gte: node.gte, gt: node.gt, lte: node.lte, lt: node.lt } } };
    case 'time_range':
      return { node: { $case: 'timeRange', value: { field: node.field, gteMs: ms(node.gte), gtMs: ms(node.gt), lteMs: ms(node.lte), ltMs: ms(node.lt) } } };
    case 'prefix':
      return { node: { $case: 'prefix', value: { field: node.field, prefix: node.prefix } } };
  }
}
