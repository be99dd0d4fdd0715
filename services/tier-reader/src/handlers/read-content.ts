/** TierReader.ReadContent: one node's tier (content/read, content/abstract, content/overview). */
import { InvalidUriError, resolveUri } from '@ctxmesh/kernel';
import type { tierReader } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { CONTENT_TIERS, ContentNotFoundError, readContent, type ContentTier } from '../domain/content';
import { AccessDeniedError } from '@ctxmesh/stores';
import { scopeOf } from './common';
import type { HandlerEnv } from './env';

/** Build the ReadContent handler. */
export function readContentHandler(env: HandlerEnv): Handler<tierReader.ReadContentRequest, tierReader.ReadContentResponse> {
  return async (req) => {
    const scope = scopeOf(req.identity);
    if (!(CONTENT_TIERS as readonly string[]).includes(req.tier)) {
      throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_TIER', `tier must be one of ${CONTENT_TIERS.join(', ')}, got ${JSON.stringify(req.tier)}`);
    }
    let uri: string;
    try {
      uri = resolveUri(req.uri, scope.user);
    } catch (err) {
      if (err instanceof InvalidUriError) {
        throw new CtxError(Code.INVALID_ARGUMENT, 'INVALID_URI', err.message, { cause: err, metadata: { uri: err.uri, reason: err.reason } });
      }
      throw err;
    }
    try {
      return await readContent(env.index, scope, uri, req.tier as ContentTier);
    } catch (err) {
      if (err instanceof ContentNotFoundError) throw new CtxError(Code.NOT_FOUND, 'NOT_FOUND', err.message, { cause: err, metadata: { uri } });
      if (err instanceof AccessDeniedError) throw new CtxError(Code.PERMISSION_DENIED, 'ACCESS_DENIED', err.message, { cause: err, metadata: { uri } });
      throw err;
    }
  };
}
