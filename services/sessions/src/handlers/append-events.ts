/** SessionsService.AppendEvents: append harness events (creates the session on first append). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { InvalidFieldError, parseHarnessEventJson } from '../domain';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/**
 * One wire event as the domain's raw event object: `json` is the event; `type`, when set,
 * must agree with it (and fills it in when the JSON leaves it out).
 * @throws InvalidFieldError naming `events[i].json` or `events[i].type`
 */
export function eventOf(e: sessions.SessionEvent, path: string): unknown {
  if (e.json.trim() === '') throw new InvalidFieldError(`${path}.json`, 'is required (the event as a JSON object)');
  const parsed = parseHarnessEventJson(e.json, path);
  if (e.type === '' || typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return parsed;
  const obj = parsed as Record<string, unknown>;
  if (obj.type === undefined) return { type: e.type, ...obj };
  if (obj.type !== e.type) throw new InvalidFieldError(`${path}.type`, `is ${JSON.stringify(e.type)} but the JSON says ${JSON.stringify(obj.type)}`);
  return obj;
}

/**
 * Build the handler. Malformed or engine-owned events → INVALID_ARGUMENT naming the field;
 * a stale `expected_head` → ABORTED with the current head and generation.
 */
export function appendEventsHandler(deps: SessionsHandlerDeps): Handler<sessions.AppendEventsRequest, sessions.AppendEventsResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const events = req.events.map((e, i) => eventOf(e, `events[${i}]`));
      const res = await deps.sessions.appendEvents(key, { events, expectedHead: req.expectedHead, agentId: req.agentId });
      return {
        seqs: res.seqs,
        head: res.head,
        generation: res.generation,
        prunes: res.prunes.map((p) => ({ pruneId: p.pruneId, reason: p.reason, shadowedSeqs: p.shadowedSeqs, stubSeq: p.stubSeq })),
      };
    });
}
