/**
 * Typed wrapper of the sessions service's gRPC client (message capture). Every method takes
 * the request's Budget.
 */
import { sessions } from '@ctxmesh/proto';
import { Budget, callUnary, Code, connect } from '@ctxmesh/rpc';
import { sessionsLogPort, type SessionsLogPort } from '../routes/sessions-log';

const DOMAIN = 'sessions';

/** What the routes need from the sessions service. */
export interface SessionsClient {
  /**
   * Append captured messages. Never retried (an append is not idempotent). INVALID_ARGUMENT
   * passes through: the gateway validated the session id, roles and contents it sends;
   * NOT_FOUND, PERMISSION_DENIED and FAILED_PRECONDITION describe the caller's session.
   */
  appendMessages(req: sessions.AppendMessagesRequest, budget: Budget): Promise<sessions.AppendMessagesResponse>;
  /** The session-log operations (overflow-recovery §3.3) behind `/api/v1/sessions/{sid}/…`; absent in tests that do not mount them. */
  log?: SessionsLogPort;
  /** Close the channel. */
  close(): void;
}

/** Connect to the sessions service at `host:port`. */
export function sessionsClient(address: string): SessionsClient {
  const c = connect(sessions.SessionsServiceClient, address);
  return {
    appendMessages: (req, budget) =>
      callUnary(c.appendMessages.bind(c), req, budget, {
        domain: DOMAIN,
        pass: [Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.FAILED_PRECONDITION],
        retry: false,
        requestId: req.identity?.requestId,
      }),
    log: sessionsLogPort(c),
    close: () => c.close(),
  };
}
