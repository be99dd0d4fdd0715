/**
 * The sessions service's port for the gateway: message capture (`appendMessages`) and the
 * session-log operations, over one channel. Every method takes the request's Budget.
 */
import { sessions } from '@ctxmesh/proto';
import { clientPort, Code, connect, type Port } from '@ctxmesh/rpc';
import { sessionsLogPort, type SessionsLogPort } from '../routes/sessions-log';

/** What the routes need from the sessions service. */
export interface SessionsClient {
  /**
   * Append captured messages. Never retried (an append is not idempotent). INVALID_ARGUMENT
   * passes through: the gateway validated the session id, roles and contents it sends;
   * NOT_FOUND, PERMISSION_DENIED and FAILED_PRECONDITION describe the caller's session.
   */
  appendMessages: Port<sessions.SessionsServiceClient>['appendMessages'];
  /** The session-log operations (overflow-recovery §3.3) behind `/api/v1/sessions/{sid}/…`; absent in tests that do not mount them. */
  log?: SessionsLogPort;
  /** Close the channel. */
  close(): void;
}

/** Connect to the sessions service at `host:port`. */
export function sessionsClient(address: string): SessionsClient {
  const c = connect(sessions.SessionsServiceClient, address);
  const port = clientPort(c, sessions.SessionsServiceService, {
    domain: 'sessions',
    requestIdFromIdentity: true,
    methods: { appendMessages: { pass: [Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.FAILED_PRECONDITION], retry: false } },
  });
  return { appendMessages: port.appendMessages, log: sessionsLogPort(c), close: () => c.close() };
}
