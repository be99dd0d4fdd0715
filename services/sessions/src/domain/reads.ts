/**
 * The read calls of the session log (§3.3): ProjectSurface, ListCompressibleRanges,
 * Decompress, SearchContext and GetStatus. They never write, so they never move the
 * generation (§3.5 invariant 12).
 */
import type { BudgetRecord, SessionKey } from '@ctxmesh/stores';
import type { LogDeps } from './deps';
import type { DecompressPage } from './decompress';
import { decompressPage, resolveRef } from './decompress';
import { NotFoundError } from './errors';
import type { DecompressInput, ProjectSurfaceInput, SearchContextInput } from './inputs';
import { checkKey, checkPreserveRecent, checkSearchInput, checkWindow } from './inputs';
import type { ClaimCurrency, ProjectedMessage } from './projection';
import type { RangeRow } from './ranges';
import { computeCompressibleRanges } from './ranges';
import type { SearchHit } from './search';
import { buildCorpus, SearchIndex } from './search';
import { CLAIM_ESTIMATOR_ID } from './tokens';

/** ProjectSurface output. */
export interface ProjectSurfaceResult {
  head: number;
  generation: number;
  messages: ProjectedMessage[];
  /** Rank tokens of the surface. */
  rankTokens: number;
  /** `contextTokens − reservedOutputTokens`, 0 without a window. */
  inputBudget: number;
  /** True when a window was given and `rankTokens > inputBudget`. */
  overWindow: boolean;
  /** The advisory ranges, when asked. */
  ranges?: RangeRow[];
}

/** ListCompressibleRanges output. */
export interface ListRangesResult {
  head: number;
  generation: number;
  /** Oldest first. */
  ranges: RangeRow[];
}

/** A block as GetStatus reports it. */
export interface BlockStatus {
  blockId: string;
  kernelRef: string;
  tier: number;
  topic: string;
  author: string;
  /** Checkpoint seq (-1 when missing). */
  summarySeq: number;
  hiddenCount: number;
  claimTokens: number;
  active: boolean;
}

/** GetStatus output. */
export interface SessionStatus {
  head: number;
  generation: number;
  surfaceNodes: number;
  rankTokens: number;
  blocks: BlockStatus[];
  /** Live checkpoint seqs on the surface. */
  checkpointSeqs: number[];
  budgets: Array<{ agentId: string; used: number; max: number }>;
  claims: ClaimCurrency;
  estimatorId: string;
  /** Compactions with a start and no end (stale leftovers; never blocking). */
  danglingCompactions: string[];
}

/**
 * ProjectSurface: the messages the model sees, their rank tokens and the window arithmetic.
 * It never drops anything on its own.
 * @throws InvalidFieldError for `contextTokens ≤ 0` or `reservedOutputTokens ≥ contextTokens`
 */
export async function projectSurface(deps: LogDeps, key: SessionKey, input: ProjectSurfaceInput = {}): Promise<ProjectSurfaceResult> {
  checkKey(key);
  const window = checkWindow(input.window);
  const preserveRecent = checkPreserveRecent(input.preserveRecent, 'preserveRecent');
  const view = await deps.log.requireView(key);
  const rankTokens = view.surfaceRankTokens();
  const inputBudget = window ? window.contextTokens - window.reservedOutputTokens : 0;
  return {
    head: view.head,
    generation: view.generation,
    messages: view.messages(),
    rankTokens,
    inputBudget,
    overWindow: window !== undefined && rankTokens > inputBudget,
    ...(input.includeRanges ? { ranges: computeCompressibleRanges(view, preserveRecent).map((r) => r.row) } : {}),
  };
}

/** ListCompressibleRanges, oldest first. @param input.preserveRecent default 5 */
export async function listCompressibleRanges(deps: LogDeps, key: SessionKey, input: { preserveRecent?: number } = {}): Promise<ListRangesResult> {
  checkKey(key);
  const preserveRecent = checkPreserveRecent(input.preserveRecent, 'preserveRecent');
  const view = await deps.log.requireView(key);
  return { head: view.head, generation: view.generation, ranges: computeCompressibleRanges(view, preserveRecent).map((r) => r.row) };
}

/**
 * Decompress (read-only, paged).
 * @throws NotFoundError for an unknown ref; InvalidFieldError for a blank or ambiguous one
 */
export async function decompress(deps: LogDeps, key: SessionKey, input: DecompressInput): Promise<DecompressPage> {
  checkKey(key);
  const view = await deps.log.requireView(key);
  return decompressPage(view, resolveRef(view, input.ref), input.offset, input.limit);
}

/**
 * SearchContext over blocks and hidden originals; an empty query gives no hits. The index is
 * built once per head and kept with the cached session.
 */
export async function searchContext(deps: LogDeps, key: SessionKey, input: SearchContextInput): Promise<{ hits: SearchHit[] }> {
  checkKey(key);
  const { query, limit } = checkSearchInput(input);
  const loaded = await deps.log.load(key);
  if (!loaded) throw new NotFoundError('SESSION_NOT_FOUND', `session ${key.sessionId} not found`, { sessionId: key.sessionId });
  const { entry, view } = loaded;
  let index = entry.search?.head === view.head ? entry.search.index : undefined;
  if (!index) {
    index = new SearchIndex(buildCorpus(view));
    if (!entry.search || entry.search.head < view.head) entry.search = { head: view.head, index };
  }
  return { hits: index.search(query, limit) };
}

/** GetStatus: head, generation, blocks, live checkpoints, budgets, claims. */
export async function getStatus(deps: LogDeps, key: SessionKey): Promise<SessionStatus> {
  checkKey(key);
  const view = await deps.log.requireView(key);
  const budgets: BudgetRecord[] = await deps.store.listBudgets(key);
  return {
    head: view.head,
    generation: view.generation,
    surfaceNodes: view.surface.length,
    rankTokens: view.surfaceRankTokens(),
    blocks: view.blocks.map((b) => ({
      blockId: b.blockId,
      kernelRef: b.kernelRef,
      tier: b.tier,
      topic: b.topic,
      author: b.author,
      summarySeq: b.summarySeq ?? -1,
      hiddenCount: b.shadowedSeqs.length,
      claimTokens: b.claimTokens,
      active: b.active,
    })),
    checkpointSeqs: view.surface.filter((s) => view.node(s).checkpoint),
    budgets: budgets.map((b) => ({ agentId: b.agentId, used: b.used, max: deps.maxOverflowRetries })),
    claims: view.claims(),
    estimatorId: CLAIM_ESTIMATOR_ID,
    danglingCompactions: [...view.danglingCompactions],
  };
}
