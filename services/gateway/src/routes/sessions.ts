/**
 * Session capture (plugin-client: the capture hooks): `POST /api/v1/sessions/{id}/messages`
 * and `/messages/batch` → sessions `AppendMessages`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayDeps } from '../http/app';
import { budgetOf, callerOf } from '../http/context';
import { protoIdentity, successEnvelope } from '../mapping/search';
import { sessionIdOf, validateBatchBody, validateMessageBody } from '../mapping/sessions';
import type { sessions } from '@ctxmesh/proto';

/** `result` of a capture call. */
export interface AppendResultJson {
  session_id: string;
  /** Messages in the session after the call. */
  message_count: number;
  /** Sequence numbers assigned to the appended messages. */
  seqs: number[];
}

/** Mount the session capture routes on an authenticated scope. */
export function sessionRoutes(api: FastifyInstance, deps: GatewayDeps): void {
  const append = async (request: FastifyRequest, messages: sessions.CapturedMessage[]) => {
    const caller = callerOf(request);
    const sessionId = sessionIdOf((request.params as { sid: string }).sid);
    const res = await deps.sessions.appendMessages({ identity: protoIdentity(caller), sessionId, messages }, budgetOf(request, deps.deadlines));
    const result: AppendResultJson = { session_id: sessionId, message_count: res.messageCount, seqs: [...res.seqs] };
    return successEnvelope(result);
  };

  api.post('/api/v1/sessions/:sid/messages', async (request) => {
    // The path is checked before the body, as FastAPI validates path parameters first.
    sessionIdOf((request.params as { sid: string }).sid);
    return append(request, [validateMessageBody(request.body)]);
  });

  api.post('/api/v1/sessions/:sid/messages/batch', async (request) => {
    sessionIdOf((request.params as { sid: string }).sid);
    return append(request, validateBatchBody(request.body));
  });
}
