/**
 * From index hits to node hits (the indexing data model): Find and context gathering work on
 * nodes, so a hit on a passage `U#p<i>` collapses into its document `U` (best score), shown
 * with the document point's abstract; directory sidecars stay as they are (list mode shows
 * them, context gathering strips them itself).
 */
import { type NodeContextType, type NodeSummary, type SearchHit, passageDocOf } from '@ctxmesh/stores';

/** One node hit, whatever produced it. */
export interface NodeHit {
  /** Node URI: a file, a directory sidecar, or the document of a collapsed passage. */
  uri: string;
  /** memory, resource or skill. */
  contextType: NodeContextType;
  /** 0 = abstract sidecar, 1 = overview sidecar, 2 = file. */
  level: number;
  /** Calibrated score in 0..1 (the best of the node's points). */
  score: number;
  /** The document point's abstract ("" when unknown). */
  abstract: string;
  /** The document point's overview ("" when not fetched or none). */
  overview: string;
  /** Normalised `k=v` tags. */
  tags: string[];
  /** Declared category stored with the node. */
  category: string;
}

function fromSummary(node: NodeSummary, uri: string, score: number, asDocument: boolean): NodeHit {
  return {
    uri,
    contextType: node.contextType,
    level: node.level,
    score,
    abstract: asDocument ? node.abstract : '',
    overview: asDocument ? (node.overview ?? '') : '',
    tags: [...node.tags],
    category: node.category,
  };
}

/**
 * Collapse passage hits into their documents.
 *
 * Hits arrive best first. A document's score is the best score among its own point and its
 * passages; its abstract/overview come from its own point (from `hits`, else from `docs`).
 * A passage whose document point is in neither keeps the passage's metadata with an empty
 * abstract (a document being rewritten can briefly look like that). Order: by node score,
 * descending, ties in first-appearance order.
 * @param docs document points fetched for passages whose document did not hit
 */
export function collapsePassages(hits: readonly SearchHit[], docs: ReadonlyMap<string, NodeSummary> = new Map()): NodeHit[] {
  const byUri = new Map<string, { hit: NodeHit; fromDoc: boolean; order: number }>();
  for (const h of hits) {
    const doc = passageDocOf(h.node);
    const uri = doc ?? h.node.uri;
    const score = Number.isFinite(h.score) ? h.score : 0;
    const seen = byUri.get(uri);
    if (!seen) {
      const own = doc === null ? h.node : docs.get(uri);
      byUri.set(uri, {
        hit: own ? fromSummary(own, uri, score, true) : fromSummary(h.node, uri, score, false),
        fromDoc: own !== undefined,
        order: byUri.size,
      });
      continue;
    }
    if (score > seen.hit.score) seen.hit.score = score;
    if (doc === null && !seen.fromDoc) {
      // The document's own point arrived after one of its passages: take its texts.
      const best = seen.hit.score;
      seen.hit = fromSummary(h.node, uri, best, true);
      seen.fromDoc = true;
    }
  }
  return [...byUri.values()].sort((a, b) => b.hit.score - a.hit.score || a.order - b.order).map((x) => x.hit);
}

/** The three lists of a search result, by context type. */
export interface HitLists {
  memories: NodeHit[];
  resources: NodeHit[];
  skills: NodeHit[];
}

/** Bucket hits by context type, keeping their order (best first). */
export function bucketByContextType(hits: readonly NodeHit[]): HitLists {
  const out: HitLists = { memories: [], resources: [], skills: [] };
  for (const h of hits) {
    if (h.contextType === 'memory') out.memories.push(h);
    else if (h.contextType === 'skill') out.skills.push(h);
    else out.resources.push(h);
  }
  return out;
}

/**
 * Merge the hits of several queries by URI, keeping each URI's best score (and that hit's
 * texts), ordered by score descending (ties keep first appearance), cut to `limit`.
 */
export function mergeByUri(lists: ReadonlyArray<readonly NodeHit[]>, limit: number): NodeHit[] {
  const best = new Map<string, { hit: NodeHit; order: number }>();
  for (const list of lists) {
    for (const h of list) {
      const seen = best.get(h.uri);
      if (!seen) best.set(h.uri, { hit: h, order: best.size });
      else if (h.score > seen.hit.score) seen.hit = h;
    }
  }
  const merged = [...best.values()].sort((a, b) => b.hit.score - a.hit.score || a.order - b.order).map((x) => x.hit);
  return merged.slice(0, Math.max(0, Math.floor(limit)));
}
