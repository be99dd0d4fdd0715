/**
 * Retrieve gathering (retrieve-contract "Scopes", "Request"): passages of the workspace's
 * resources ranked with an optional MMR pass and a per-document cap, the subject's own
 * memories, and the workspace's group memories, all valid at `as_of`.
 *
 * Retrieve works on passages, not nodes (the indexing data model): a long document is found
 * through its `U#p<i>` points, and its document point (whose vector covers only abstract and
 * overview) is not a passage; an unchunked document is its own single passage.
 */
import { prepareBody } from '@ctxmesh/kernel';
import { type NodeRecord, type SearchHit, type VectorIndex, type Visibility, AccessDeniedError, isPrivileged, searchVisibility, type CallerScope } from '@ctxmesh/stores';
import { mergeByUri, type NodeHit } from './hits';
import { capPerDocument, mmrSelect } from './mmr';
import { emptyQueryRejection, rejection } from './rejections';
import type { NodeSearcher } from './searcher';

/** The workspace retrieve searches when the caller's identity names none. */
export const DEFAULT_WORKSPACE = 'default';
/** Root of the workspace's shared (group) memories. */
export const GROUP_MEMORY_ROOT = 'viking://agent/memories';
/** Default number of index points ranked before MMR and the per-document cap. */
export const MIN_CANDIDATE_POOL = 40;
/** Upper bound on the candidate pool, whatever the caller asks. */
export const MAX_CANDIDATE_POOL = 400;

/** End-user subjects: one URI segment (`viking://user/{subject}/memories`). */
const SUBJECT = /^[A-Za-z0-9_.@-]{1,128}$/;

/** A passage with its text. */
export interface PassageHit {
  /** Passage URI (`U#p<i>`, or `U` for an unchunked document). */
  uri: string;
  /** Document URI. */
  docUri: string;
  /** Calibrated relevance in 0..1. */
  score: number;
  /** Title of the document. */
  title: string;
  /** Passage text. */
  text: string;
}

/** A memory with its text. */
export interface MemoryHit {
  /** Memory node URI. */
  uri: string;
  /** Calibrated relevance in 0..1. */
  score: number;
  /** Subject the memory belongs to ("" for group memories). */
  subject: string;
  /** The memory's whole visible body (its stored abstract). */
  text: string;
}

/** A validated retrieve gathering request. */
export interface PassagesInput {
  /** The caller; `workspace` null means the default workspace. */
  scope: CallerScope;
  /** Queries, original first; blank ones are ignored. */
  queries: string[];
  /** End-user subject of the memories array; "" = the caller's user. */
  subject: string;
  /** Passages wanted (≤ 0 → none). */
  topK: number;
  /** Subject and group memories wanted, each (≤ 0 → none). */
  memoryK: number;
  /** MMR trade-off in 0..1, or null for no MMR pass. */
  mmrLambda: number | null;
  /** At most this many passages per document (≥ 1). */
  maxPerDocument: number;
  /** Valid-time instant, ms since the epoch. */
  asOf: number;
  /** Points ranked before MMR and caps; 0 = max(4·topK, 40), capped at 400. */
  candidatePool: number;
}

/** What retrieve gathering returns. */
export interface PassagesResult {
  /** Passages in rank order (MMR pick order when MMR ran). */
  passages: PassageHit[];
  /** The subject's memories, best first. */
  memories: MemoryHit[];
  /** The workspace's group memories, best first. */
  groupMemories: MemoryHit[];
}

/** What the retrieve domain reads with. */
export interface PassageEnv {
  /** Searcher (embedding cache shared with the other RPCs). */
  searcher: NodeSearcher;
  /** The index, for texts, vectors and chunk probes. */
  index: VectorIndex;
}

/** Roots passages come from: the account's resources and the caller's own. */
export function passageTargets(user: string): string[] {
  return ['viking://resources', `viking://user/${user}/resources`];
}

/** Root of a subject's memories. */
export function subjectMemoryRoot(subject: string): string {
  return `viking://user/${subject}/memories`;
}

/** Points ranked before MMR and the cap for a request of `topK`. */
export function candidatePoolSize(topK: number, asked: number): number {
  const want = asked > 0 ? asked : Math.max(4 * topK, MIN_CANDIDATE_POOL);
  return Math.min(MAX_CANDIDATE_POOL, Math.max(Math.floor(want), Math.max(0, Math.floor(topK))));
}

/** Distinct non-blank queries, or the empty-query rejection. */
export function queriesOf(queries: readonly string[]): string[] {
  const out = [...new Set(queries.filter((q) => q.trim() !== ''))];
  if (out.length === 0) throw emptyQueryRejection();
  return out;
}

/** The caller's scope restricted to its workspace (the default one when none is named). */
export function workspaceScope(scope: CallerScope): CallerScope {
  return { ...scope, workspace: scope.workspace ?? DEFAULT_WORKSPACE };
}

/**
 * Merge point hits of several queries by URI, keeping each URI's best score; best first, ties
 * in order of first appearance.
 */
export function mergePoints(lists: ReadonlyArray<readonly SearchHit[]>): SearchHit[] {
  const best = new Map<string, { hit: SearchHit; order: number }>();
  for (const list of lists) {
    for (const h of list) {
      const seen = best.get(h.node.uri);
      if (!seen) best.set(h.node.uri, { hit: h, order: best.size });
      else if (h.score > seen.hit.score) seen.hit = h;
    }
  }
  return [...best.values()].sort((a, b) => b.hit.score - a.hit.score || a.order - b.order).map((x) => x.hit);
}

/** A ranked passage candidate before its text is read. */
export interface PassageCandidate {
  uri: string;
  docUri: string;
  score: number;
}

/**
 * Candidates from point hits: document points of chunked documents are dropped (their
 * passages stand for them), everything else is a passage. A document is chunked when its
 * first passage `U#p1` exists.
 */
export async function passageCandidates(hits: readonly SearchHit[], index: VectorIndex, vis: Visibility): Promise<PassageCandidate[]> {
  const docPoints = [...new Set(hits.filter((h) => h.node.passageIndex === 0 && h.node.uri === h.node.docUri).map((h) => h.node.uri))];
  const probes = docPoints.length > 0 ? await index.get(docPoints.map((u) => `${u}#p1`), vis, 'summary') : [];
  const chunked = new Set(docPoints.filter((_, i) => probes[i] !== null && probes[i] !== undefined));
  return hits
    .filter((h) => !(h.node.passageIndex === 0 && chunked.has(h.node.uri)))
    .map((h) => ({ uri: h.node.uri, docUri: h.node.docUri || h.node.uri, score: Number.isFinite(h.score) ? h.score : 0 }));
}

/** The text a passage point serves: a chunk's body, or an unchunked document's prepared body. */
export function passageText(r: Pick<NodeRecord, 'uri' | 'body' | 'passageIndex'>): string {
  return r.passageIndex > 0 ? r.body : prepareBody(r.uri, false, r.body);
}

/** Read the texts and titles of selected candidates, in order (vanished points are dropped). */
export async function readPassages(selected: readonly PassageCandidate[], index: VectorIndex, vis: Visibility): Promise<PassageHit[]> {
  if (selected.length === 0) return [];
  const records = await index.get(
    selected.map((c) => c.uri),
    vis,
    'full',
  );
  const out: PassageHit[] = [];
  selected.forEach((c, i) => {
    const r = records[i] as NodeRecord | null;
    if (r) out.push({ uri: c.uri, docUri: c.docUri, score: c.score, title: r.title, text: passageText(r) });
  });
  return out;
}

function memoryHit(h: NodeHit, subject: string): MemoryHit {
  return { uri: h.uri, score: h.score, subject, text: h.abstract || h.overview };
}

/**
 * Check the subject and that the caller may read its memories: a user may name only itself;
 * root and admin may name any user of the account.
 * @throws InvalidArgumentError `BAD_SUBJECT`; AccessDeniedError for another user's subject
 */
export function subjectOf(scope: CallerScope, raw: string): string {
  const subject = raw.trim() || scope.user;
  if (!SUBJECT.test(subject)) throw rejection('BAD_SUBJECT', `subject must be 1 to 128 letters, digits, '_', '.', '@' or '-': ${JSON.stringify(raw)}`);
  if (subject !== scope.user && !isPrivileged(scope.role)) throw new AccessDeniedError(subjectMemoryRoot(subject));
  return subject;
}

/**
 * Gather the three arrays of a retrieve answer.
 *
 * - passages: hybrid search of every query under the resource roots of the workspace (levels 2,
 *   valid at `asOf`), merged by point; chunked documents' own points dropped; then MMR (when
 *   `mmrLambda` is set, over the points' dense vectors) or rank order, both under the
 *   per-document cap, cut to `topK`;
 * - memories: the subject's memory nodes (`viking://user/{subject}/memories`, any workspace:
 *   they are the person's, not the project's), best first, at most `memoryK`;
 * - groupMemories: `viking://agent/memories` in the workspace, at most `memoryK`.
 * @throws InvalidArgumentError (EMPTY_QUERY, BAD_SUBJECT); AccessDeniedError (another user's subject)
 */
export async function gatherPassages(input: PassagesInput, env: PassageEnv, signal?: AbortSignal): Promise<PassagesResult> {
  const queries = queriesOf(input.queries);
  const scope = workspaceScope(input.scope);
  const subject = subjectOf(scope, input.subject);
  const topK = Math.max(0, Math.floor(input.topK));
  const memoryK = Math.max(0, Math.floor(input.memoryK));

  const targets = passageTargets(scope.user);
  const passageVis = searchVisibility(scope, { targets });
  const memTargets = [subjectMemoryRoot(subject)];
  const memVis = searchVisibility({ ...scope, workspace: null }, { targets: memTargets });
  const groupTargets = [GROUP_MEMORY_ROOT];
  const groupVis = searchVisibility(scope, { targets: groupTargets });
  const base = { filter: null, scoreThreshold: null, levels: [2], asOf: input.asOf };

  const pool = candidatePoolSize(topK, input.candidatePool);
  const [points, memLists] = await Promise.all([
    topK > 0 ? env.searcher.searchPoints(queries.map((text) => ({ ...base, text, visibility: passageVis, targets, limit: pool })), signal) : Promise.resolve([]),
    memoryK > 0
      ? env.searcher.searchMany(
          [
            ...queries.map((text) => ({ ...base, text, visibility: memVis, targets: memTargets, limit: memoryK })),
            ...queries.map((text) => ({ ...base, text, visibility: groupVis, targets: groupTargets, limit: memoryK })),
          ],
          signal,
        )
      : Promise.resolve([]),
  ]);

  let passages: PassageHit[] = [];
  if (topK > 0) {
    const candidates = await passageCandidates(mergePoints(points), env.index, passageVis);
    let selected: PassageCandidate[];
    if (input.mmrLambda === null) selected = capPerDocument(candidates, input.maxPerDocument, topK);
    else {
      const vectors = await env.index.vectors(
        candidates.map((c) => c.uri),
        passageVis,
      );
      selected = mmrSelect(candidates, vectors, { lambda: input.mmrLambda, limit: topK, maxPerDocument: input.maxPerDocument });
    }
    passages = await readPassages(selected, env.index, passageVis);
  }

  const n = queries.length;
  const memories = memoryK > 0 ? mergeByUri(memLists.slice(0, n), memoryK).map((h) => memoryHit(h, subject)) : [];
  const groupMemories = memoryK > 0 ? mergeByUri(memLists.slice(n), memoryK).map((h) => memoryHit(h, '')) : [];
  return { passages, memories, groupMemories };
}
