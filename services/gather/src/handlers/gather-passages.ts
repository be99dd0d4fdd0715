/** Gather.GatherPassages: retrieve gathering (retrieve-contract "Scopes", "Request"). */
import type { gather } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { gatherPassages, type MemoryHit, type PassageHit } from '../domain/passages';
import { asOfMs, scopeOf, toWireError } from './common';
import type { HandlerEnv } from './env';

/** Default per-document cap when the wire says 0 (the contract's default). */
export const DEFAULT_MAX_PER_DOCUMENT = 2;

/** A passage on the wire. */
export function toPassageRef(p: PassageHit): gather.PassageRef {
  return { uri: p.uri, docUri: p.docUri, score: p.score, title: p.title, text: p.text };
}

/** A memory on the wire. */
export function toMemoryRef(m: MemoryHit): gather.MemoryRef {
  return { uri: m.uri, score: m.score, subject: m.subject, text: m.text };
}

/**
 * The MMR trade-off of a request: absent → null (no MMR pass).
 * @throws CtxError INVALID_ARGUMENT `BAD_MMR_LAMBDA` outside 0..1 or not finite
 */
export function mmrLambdaOf(v: number | undefined): number | null {
  if (v === undefined) return null;
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_MMR_LAMBDA', `mmr_lambda must be a number in 0..1, got ${v}`);
  return v;
}

/** Build the GatherPassages handler. */
export function gatherPassagesHandler(env: HandlerEnv): Handler<gather.GatherPassagesRequest, gather.GatherPassagesResponse> {
  return async (req, ctx) => {
    try {
      const res = await gatherPassages(
        {
          scope: scopeOf(req.identity),
          queries: req.queries,
          subject: req.subject,
          topK: req.topK,
          memoryK: req.memoryK,
          mmrLambda: mmrLambdaOf(req.mmrLambda),
          maxPerDocument: req.maxPerDocument > 0 ? req.maxPerDocument : DEFAULT_MAX_PER_DOCUMENT,
          asOf: asOfMs(req.asOfMs, env.now),
          candidatePool: req.candidatePool,
        },
        env,
        ctx.budget.signal,
      );
      return { passages: res.passages.map(toPassageRef), memories: res.memories.map(toMemoryRef), groupMemories: res.groupMemories.map(toMemoryRef) };
    } catch (e) {
      return toWireError(e);
    }
  };
}
