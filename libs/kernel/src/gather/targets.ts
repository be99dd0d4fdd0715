/**
 * Where each quota bucket searches (context-contract §3.3 `category_targets`) and the
 * context-type condition ANDed into its filter.
 */
import { MEMORY_BUCKETS, SCHEME, peersRoot, userRoot, type ContextType } from '../uri';
import type { QuotaKey } from '../request/types';

/** Role of the caller inside its account (dev mode is root). */
export type CallerRole = 'root' | 'admin' | 'user';

/** True for the four memory buckets (events, entities, preferences, experiences). */
export function isMemoryBucket(bucket: string): boolean {
  return (MEMORY_BUCKETS as readonly string[]).includes(bucket);
}

/**
 * Target URIs searched for one bucket.
 *
 * - memory bucket X: `{user_root}/memories/X`, plus `{user_root}/peers/{actor}/memories/X`
 *   with an actor peer;
 * - resources, root role: `{user_root}/resources`, `viking://resources` (+ actor peer resources);
 * - resources, other roles: with an actor peer `viking://resources`, `{user_root}/resources`,
 *   `{user_root}/peers/{actor}/resources`; without one `viking://resources`, `{user_root}`;
 * - skills: `{user_root}/skills`, `viking://agent/skills` (any role).
 */
export function categoryTargets(bucket: QuotaKey, userId: string, actorPeer: string | null, role: CallerRole): string[] {
  const root = userRoot(userId);
  const actorRoot = actorPeer ? `${peersRoot(userId)}/${actorPeer}` : null;
  if (bucket === 'skills') return [`${root}/skills`, `${SCHEME}agent/skills`];
  if (bucket === 'resources') {
    if (role === 'root') {
      const t = [`${root}/resources`, `${SCHEME}resources`];
      if (actorRoot) t.push(`${actorRoot}/resources`);
      return t;
    }
    return actorRoot
      ? [`${SCHEME}resources`, `${root}/resources`, `${actorRoot}/resources`]
      : [`${SCHEME}resources`, root];
  }
  const t = [`${root}/memories/${bucket}`];
  if (actorRoot) t.push(`${actorRoot}/memories/${bucket}`);
  return t;
}

/** Context type a bucket's hits must have: memory buckets → memory, resources, skills. */
export function bucketContextType(bucket: QuotaKey): ContextType {
  if (bucket === 'resources') return 'resource';
  if (bucket === 'skills') return 'skill';
  return 'memory';
}

/** Any metadata filter node: the kernel only needs its `op`. */
export interface FilterLike {
  op: string;
}

/** `{op:"must", field:"context_type", conds:[type]}`. */
export interface ContextTypeCondition {
  op: 'must';
  field: 'context_type';
  conds: ContextType[];
}

/** `{op:"and", conds:[…]}`. */
export interface AndFilter<T> {
  op: 'and';
  conds: T[];
}

/** A filter gathering may send: the effective filter, a bucket condition, or their AND. */
export type GatherFilter<F> = F | ContextTypeCondition | AndFilter<F | ContextTypeCondition>;

/**
 * `effective_filter AND context_type condition`, flattened: an `and` filter gets the
 * condition appended to its own list; no filter gives the bare condition.
 */
export function withContextType<F extends FilterLike>(filter: F | null, type: ContextType): GatherFilter<F> {
  const cond: ContextTypeCondition = { op: 'must', field: 'context_type', conds: [type] };
  if (filter === null) return cond;
  if (filter.op === 'and') {
    const conds = (filter as unknown as { conds?: unknown }).conds;
    if (Array.isArray(conds)) return { op: 'and', conds: [...(conds as F[]), cond] };
  }
  return { op: 'and', conds: [filter, cond] };
}
