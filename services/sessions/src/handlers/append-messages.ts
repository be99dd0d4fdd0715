/** SessionsService.AppendMessages: the plugins' capture hooks (creates the session). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. A bad role or a blank content → INVALID_ARGUMENT naming `messages[i].<field>`. */
export function appendMessagesHandler(deps: SessionsHandlerDeps): Handler<sessions.AppendMessagesRequest, sessions.AppendMessagesResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.appendMessages(key, { messages: req.messages });
      return { seqs: res.seqs, messageCount: res.messageCount };
    });
}
