/**
 * Orchestrator.GetTrace: a retrieval trace (retrieve-contract "Traces"), for the account that
 * wrote it: the user who made the request, or an admin of the account.
 */
import type { orchestrator } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { mayReadTrace, TRACE_ID_PATTERN, traceFromStored } from '../domain/trace';
import type { HandlerEnv } from './env';

/**
 * Build the GetTrace handler.
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` / `BAD_TRACE_ID`; NOT_FOUND
 *   `TRACE_NOT_FOUND` for a trace that is missing, expired, or not the caller's to read
 */
export function getTraceHandler(env: HandlerEnv): Handler<orchestrator.GetTraceRequest, orchestrator.GetTraceResponse> {
  return async (req) => {
    const account = req.identity?.accountId ?? '';
    if (!account) throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity with account_id is required');
    if (!TRACE_ID_PATTERN.test(req.traceId)) throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_TRACE_ID', `invalid trace id ${JSON.stringify(req.traceId)}`);
    // Another account's trace — or, for an ordinary user, another user's — is as absent as
    // one never written.
    const found = env.traces ? await env.traces.get(req.traceId, account) : null;
    const row = found && mayReadTrace(found, { userId: req.identity?.userId ?? '', role: req.identity?.role ?? 0 }) ? found : null;
    if (!row) throw new CtxError(Code.NOT_FOUND, 'TRACE_NOT_FOUND', `trace '${req.traceId}' not found`, { metadata: { trace_id: req.traceId } });
    return { trace: traceFromStored(row) };
  };
}
