/**
 * Session capture (plugin-client: the capture hooks): `POST /api/v1/sessions/{id}/messages`
 * and `/messages/batch` → sessions `AppendMessages`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionsPort } from '../clients/sessions';
import type { DeadlineConfig } from '../config';
import { sessionIdOf, validateBatchBody, validateMessageBody, type CapturedMessage } from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { successEnvelope } from '../mapping/envelope';
import { appendResultJson, toAppendMessagesRequest } from '../mapping/sessions';

/** What the capture routes need. */
export interface SessionRouteDeps {
  /** The sessions service: message capture. */
  sessions: Pick<SessionsPort, 'appendMessages'>;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
}

/** Mount the session capture routes on an authenticated scope. */
export function sessionRoutes(api: FastifyInstance, deps: SessionRouteDeps): void {
  const append = async (request: FastifyRequest<{ Params: { sid: string } }>, messages: CapturedMessage[]) => {
    const sessionId = sessionIdOf(request.params.sid);
    const res = await deps.sessions.appendMessages(toAppendMessagesRequest(callerOf(request), sessionId, messages), budgetOf(request, deps.deadlines));
    return successEnvelope(appendResultJson(sessionId, res));
  };

  api.post<{ Params: { sid: string } }>('/api/v1/sessions/:sid/messages', async (request) => {
    // The path is checked before the body, as FastAPI validates path parameters first.
    sessionIdOf(request.params.sid);
    return append(request, [validateMessageBody(request.body)]);
  });

  api.post<{ Params: { sid: string } }>('/api/v1/sessions/:sid/messages/batch', async (request) => {
    sessionIdOf(request.params.sid);
    return append(request, validateBatchBody(request.body));
  });
}
