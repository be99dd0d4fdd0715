/** Orchestrator.ReadContent: one node's tier text (content/read, abstract, overview), read by the tier-reader. */
import type { orchestrator } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import type { HandlerEnv } from './env';

/** The tiers a content read may ask for. */
export const CONTENT_TIERS: readonly string[] = ['read', 'abstract', 'overview'];

/**
 * Build the ReadContent handler.
 * @throws CtxError INVALID_ARGUMENT `BAD_TIER` for another tier; the tier-reader's NOT_FOUND,
 *   PERMISSION_DENIED and INVALID_ARGUMENT pass through
 */
export function readContentHandler(env: HandlerEnv): Handler<orchestrator.ReadContentRequest, orchestrator.ReadContentResponse> {
  return async (req, ctx) => {
    if (!CONTENT_TIERS.includes(req.tier)) throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_TIER', `unknown tier '${req.tier}'`);
    const r = await env.ports.tierReader.readContent({ identity: req.identity, uri: req.uri, tier: req.tier }, ctx.budget);
    return { text: r.text };
  };
}
