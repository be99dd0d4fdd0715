/**
 * The sessions service's ports for the gateway: message capture (`appendMessages`) and the
 * session-log operations (overflow-recovery §3.3), over one channel. Every method takes the
 * request's Budget and translates downstream codes deliberately (STYLE B6).
 */
import { sessions } from '@ctxmesh/proto';
import { clientPort, Code, connect, type Port } from '@ctxmesh/rpc';

/** The sessions service's RPCs, each under the request's Budget; routes take the ones they call (`Pick`). */
export type SessionsPort = Port<sessions.SessionsServiceClient>;

/** What the session-log and workspace routes call: one method per RPC. */
export type SessionsLogPort = Pick<
  SessionsPort,
  | 'appendEvents'
  | 'projectSurface'
  | 'listCompressibleRanges'
  | 'compress'
  | 'decompress'
  | 'searchContext'
  | 'recoverOverflow'
  | 'reportAgentStatus'
  | 'getStatus'
  | 'createWorkspace'
  | 'setActiveWorkspace'
  | 'getActiveWorkspace'
>;

/** What the routes need from the sessions service. */
export interface SessionsClient {
  /**
   * Append captured messages. Never retried (an append is not idempotent). INVALID_ARGUMENT
   * passes through: the gateway validated the session id, roles and contents it sends;
   * NOT_FOUND, PERMISSION_DENIED and FAILED_PRECONDITION describe the caller's session.
   */
  appendMessages: SessionsPort['appendMessages'];
  /** The session-log operations (overflow-recovery §3.3) behind `/api/v1/sessions/{sid}/…`; absent in tests that do not mount them. */
  log?: SessionsLogPort;
  /** Close the channel. */
  close(): void;
}

/**
 * The codes the sessions service answers about the caller's own input or resources; they pass
 * through to the HTTP mapping. (INVALID_ARGUMENT is the caller's input: the routes send the
 * validated body fields as they are, and the service names the field it rejects.)
 */
const LOG_PASS = [Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ABORTED, Code.PERMISSION_DENIED, Code.ALREADY_EXISTS, Code.FAILED_PRECONDITION];

/**
 * A {@link SessionsLogPort} over a connected gRPC client. Reads are retried on UNAVAILABLE;
 * writes are not (Compress and RecoverOverflow are idempotent only by the caller's request id).
 * @param client the sessions client (the caller owns and closes it)
 */
export function sessionsLogPort(client: sessions.SessionsServiceClient): SessionsLogPort {
  const write = { retry: false };
  return clientPort(client, sessions.SessionsServiceService, {
    domain: 'sessions',
    requestIdFromIdentity: true,
    defaults: { pass: LOG_PASS, retry: true },
    methods: {
      appendEvents: write,
      compress: write,
      recoverOverflow: write,
      reportAgentStatus: write,
      createWorkspace: write,
      setActiveWorkspace: write,
    },
  });
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
