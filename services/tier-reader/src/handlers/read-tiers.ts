/** TierReader.ReadTiers: read only the bodies the tiers need (context-contract §4, §5.4). */
import { detailFromWire, resolvePacking, UnknownPackingError, UnknownTokenizerError } from '@ctxmesh/kernel';
import type { tierReader } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { type NodeContent, readVisibility } from '@ctxmesh/stores';
import { readTiers, type BodyReader } from '../domain/tiers';
import { scopeOf } from './common';
import type { HandlerEnv } from './env';

/** Build the ReadTiers handler. */
export function readTiersHandler(env: HandlerEnv): Handler<tierReader.ReadTiersRequest, tierReader.ReadTiersResponse> {
  return async (req, ctx) => {
    const scope = scopeOf(req.identity);
    const detail = detailFromWire(req.detail);
    const readBodies: BodyReader = async (uris, open) => {
      try {
        const got = await env.index.get(uris, readVisibility(scope, open), 'content');
        return got.map((r) => (r ? (r as NodeContent).body : null));
      } catch (err) {
        ctx.log.warn({ err, uris: uris.length }, 'body read failed; tiers degrade');
        throw err;
      }
    };
    try {
      const res = await readTiers(
        {
          candidates: req.candidates,
          packing: resolvePacking(req.packing),
          bestScore: req.bestScore ?? null,
          maxTokens: req.maxTokens,
          detail,
          tokenizer: req.tokenizer || 'estimate',
          outliner: req.codeOutline ? env.outliner : null,
        },
        readBodies,
        { concurrency: env.readConcurrency, batchSize: env.readBatchSize },
      );
      return { items: res.items, reads: res.reads };
    } catch (err) {
      if (err instanceof UnknownTokenizerError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_TOKENIZER', err.message, { cause: err });
      if (err instanceof UnknownPackingError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_PACKING', err.message, { cause: err });
      throw err;
    }
  };
}
