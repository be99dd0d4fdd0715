/** Gather.GatherCandidates: context-mode gathering (context-contract §3). */
import {
  CATEGORIES,
  DEFAULT_OTHER_PEER_PENALTIES,
  fateToWire,
  isQuotaKey,
  resolvePacking,
  resolveTokenizer,
  UnknownPackingError,
  UnknownTokenizerError,
  type Category,
  type Packing,
  type Penalties,
  type Quotas,
} from '@ctxmesh/kernel';
import type { common, gather } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { gatherContext } from '../domain/context';
import { asOfMs, filterOf, scopeOf, toWireError } from './common';
import type { HandlerEnv } from './env';

/**
 * Quotas on the wire (ordered name/count pairs) → the kernel's ordered map; unknown names are
 * ignored and counts are floored at 0 (the gateway has already validated them).
 */
export function quotasOf(bucketed: boolean, pairs: readonly common.NamedCount[]): Quotas | null {
  if (!bucketed) return null;
  const out: Quotas = {};
  for (const { name, count } of pairs) {
    if (!isQuotaKey(name)) continue;
    const n = Number(count);
    out[name] = Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0;
  }
  return out;
}

/** Penalties on the wire → all seven categories (defaults where a name is missing or not finite). */
export function penaltiesOf(pairs: readonly common.NamedValue[]): Penalties {
  const out = { ...DEFAULT_OTHER_PEER_PENALTIES } as Penalties;
  for (const { name, value } of pairs) {
    if ((CATEGORIES as readonly string[]).includes(name) && Number.isFinite(value)) out[name as Category] = value;
  }
  return out;
}

/** Build the GatherCandidates handler. */
export function gatherCandidatesHandler(env: HandlerEnv): Handler<gather.GatherCandidatesRequest, gather.GatherCandidatesResponse> {
  return async (req, ctx) => {
    let packing: Packing;
    try {
      packing = resolvePacking(req.packing);
      if (packing === 'evidence') resolveTokenizer(req.tokenizer || 'estimate');
    } catch (err) {
      if (err instanceof UnknownPackingError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_PACKING', err.message, { cause: err });
      if (err instanceof UnknownTokenizerError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_TOKENIZER', err.message, { cause: err });
      throw err;
    }
    try {
      const res = await gatherContext(
        {
          scope: scopeOf(req.identity),
          queries: req.queries,
          imageUrl: req.imageUrl || null,
          filter: filterOf(req.filter),
          limit: req.limit,
          scoreThreshold: req.scoreThreshold ?? null,
          quotas: quotasOf(req.bucketed, req.quotas),
          peerScope: req.peerScope || 'all',
          penalties: penaltiesOf(req.otherPeerPenalties),
          excluded: req.excludedUris,
          asOf: asOfMs(req.asOfMs, env.now),
          packing,
          maxTokens: req.maxTokens > 0 ? req.maxTokens : 1600,
          tokenizer: req.tokenizer || 'estimate',
          cooled: req.cooledUris,
          explain: req.explain,
        },
        env.searcher,
        ctx.budget.signal,
      );
      ctx.log.debug({ batches: res.batchSizes, candidates: res.candidates.length }, 'gathered');
      return {
        candidates: res.candidates.map((c) => ({
          uri: c.uri,
          category: c.category,
          score: c.score,
          rankedScore: c.rankedScore,
          abstract: c.abstract,
          origin: c.origin,
          isDirectory: c.isDirectory,
          openContext: c.openContext,
          overview: c.overview ?? '',
        })),
        searched: Object.entries(res.searched).map(([name, count]) => ({ name, count })),
        excluded: res.excluded,
        retrievalErrors: res.retrievalErrors,
        evidence: res.evidence
          ? {
              bestScore: res.evidence.bestScore ?? undefined,
              relevanceFloor: res.evidence.relevanceFloor ?? undefined,
              rounds: res.evidence.rounds,
              belowFloor: res.evidence.belowFloor,
              widths: res.evidence.widths,
            }
          : undefined,
        fates: (res.fates ?? []).map(fateToWire),
      };
    } catch (e) {
      return toWireError(e);
    }
  };
}
