/** SessionsService.ProjectSurface: the messages the model sees (read-only; never drops anything). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, rangeOf, sessionKeyOf, windowOf, type SessionsHandlerDeps } from './request';

/** Build the handler. A bad window → INVALID_ARGUMENT; an unknown session → NOT_FOUND. */
export function projectSurfaceHandler(deps: SessionsHandlerDeps): Handler<sessions.ProjectSurfaceRequest, sessions.ProjectSurfaceResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.projectSurface(key, { window: windowOf(req.window), includeRanges: req.includeRanges, preserveRecent: req.preserveRecent });
      return {
        head: res.head,
        generation: res.generation,
        messages: res.messages.map((m) => ({
          seq: m.seq,
          id: m.id,
          role: m.role,
          class: m.class,
          text: m.text,
          toolCallId: m.toolCallId ?? '',
          toolName: m.toolName ?? '',
          toolArgs: m.toolArgs ?? '',
        })),
        rankTokens: res.rankTokens,
        inputBudget: res.inputBudget,
        overWindow: res.overWindow,
        ranges: (res.ranges ?? []).map(rangeOf),
      };
    });
}
