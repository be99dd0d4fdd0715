/**
 * Integration fixtures: a sessions server on port 0 over a real store (the embedded SQLite
 * file or Redis on REDIS_URL), and a typed client that takes partial requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { common, sessions } from '@ctxmesh/proto';
import { Budget, callUnary, Code, connect, type UnaryMethod } from '@ctxmesh/rpc';
import { openEmbeddedDb, type SessionKey } from '@ctxmesh/stores';
import { redisUrl, startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { createServer, EmbeddedSessionStore, RedisSessionStore, SessionLog, Workspaces, type SessionsStore } from '../src';
import { dropPrefix, testPrefix } from './redis-fixture';

/** A deep partial of a generated message. */
export type DeepPartial<T> = T extends Array<infer U> ? Array<DeepPartial<U>> : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Every code a test may want to see as is (none is translated to INTERNAL). */
export const ALL_CODES = [
  Code.INVALID_ARGUMENT,
  Code.NOT_FOUND,
  Code.ABORTED,
  Code.PERMISSION_DENIED,
  Code.ALREADY_EXISTS,
  Code.FAILED_PRECONDITION,
  Code.UNIMPLEMENTED,
];

/** A proto identity (dev-like defaults). */
export function identity(accountId = 'acme', userId = 'alice', workspace = ''): common.Identity {
  return { accountId, userId, role: common.Role.ROLE_USER, actorPeerId: '', workspace, requestId: '' };
}

/** An event object as the wire's `SessionEvent`. */
export function wire(e: unknown): sessions.SessionEvent {
  return { type: (e as { type?: string }).type ?? '', json: JSON.stringify(e), seq: 0 };
}

/** The session key of {@link identity} defaults. */
export function keyOf(sessionId: string, accountId = 'acme', userId = 'alice'): SessionKey {
  return { account: accountId, user: userId, sessionId };
}

/** A store for one test, with its teardown. */
export interface StoreFixture {
  store: SessionsStore;
  dispose(): Promise<void>;
}

/** The embedded store on a fresh SQLite file (the production opener: WAL, sqlite-vec loaded). */
export function embeddedFixture(): StoreFixture {
  const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-sessions-'));
  const db = openEmbeddedDb(join(dir, 'ctxmesh.db'));
  return {
    store: new EmbeddedSessionStore(db),
    dispose: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis client on REDIS_URL (fails loudly when unset). */
export function redisClient(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: 2 });
}

/** The Redis store under a fresh key prefix; dispose drops the prefix. */
export function redisFixture(redis: Redis): StoreFixture & { prefix: string } {
  const prefix = testPrefix();
  return {
    prefix,
    store: new RedisSessionStore({ redis, keyPrefix: prefix }),
    dispose: () => dropPrefix(redis, prefix),
  };
}

/** Deterministic UUID-shaped ids: `<prefix>000000000001`, … */
export function counterIds(prefix = '00000000-0000-4000-8000-'): () => string {
  let n = 0;
  return () => `${prefix}${String(++n).padStart(12, '0')}`;
}

/** Options of {@link serveSessions}. */
export interface ServeOptions {
  maxOverflowRetries?: number;
  newId?: () => string;
}

/** A running sessions service and a typed client. */
export interface SessionsHarness {
  srv: TestServer;
  client: sessions.SessionsServiceClient;
  api: SessionsApi;
  close(): Promise<void>;
}

/** Start the service on port 0 over `store` (readiness = store ping). */
export async function serveSessions(store: SessionsStore, opts: ServeOptions = {}): Promise<SessionsHarness> {
  const log = pino({ level: 'silent' });
  const domain = new SessionLog({ store, maxOverflowRetries: opts.maxOverflowRetries, newId: opts.newId });
  const srv = await startTestServer([createServer({ sessions: domain, workspaces: new Workspaces(store), log })], { checkReady: () => store.ping() });
  const client = connect(sessions.SessionsServiceClient, srv.address);
  return {
    srv,
    client,
    api: sessionsApi(client),
    close: async () => {
      client.close();
      await srv.close();
    },
  };
}

/** The client's RPCs, taking partial requests (identity defaults to acme/alice). */
export type SessionsApi = ReturnType<typeof sessionsApi>;

/** Wrap a client: every call has a 15 s budget, no retries, and every code passes through. */
export function sessionsApi(client: sessions.SessionsServiceClient, defaults: { identity?: common.Identity } = {}) {
  const id = defaults.identity ?? identity();
  const call = <Req, Res>(method: UnaryMethod<Req, Res>, req: Req): Promise<Res> =>
    callUnary(method, req, Budget.ofMs(15_000), { domain: 'sessions', pass: ALL_CODES, retry: false });
  const bind = <Req, Res>(
    type: { fromPartial(o: never): Req },
    method: UnaryMethod<Req, Res>,
  ): ((req?: DeepPartial<Req>) => Promise<Res>) =>
    (req = {} as DeepPartial<Req>) => call(method, type.fromPartial({ identity: id, ...(req as object) } as never));
  const c = client;
  return {
    appendEvents: bind(sessions.AppendEventsRequest, c.appendEvents.bind(c)),
    projectSurface: bind(sessions.ProjectSurfaceRequest, c.projectSurface.bind(c)),
    listCompressibleRanges: bind(sessions.ListCompressibleRangesRequest, c.listCompressibleRanges.bind(c)),
    compress: bind(sessions.CompressRequest, c.compress.bind(c)),
    decompress: bind(sessions.DecompressRequest, c.decompress.bind(c)),
    searchContext: bind(sessions.SearchContextRequest, c.searchContext.bind(c)),
    recoverOverflow: bind(sessions.RecoverOverflowRequest, c.recoverOverflow.bind(c)),
    reportAgentStatus: bind(sessions.ReportAgentStatusRequest, c.reportAgentStatus.bind(c)),
    getStatus: bind(sessions.GetStatusRequest, c.getStatus.bind(c)),
    appendMessages: bind(sessions.AppendMessagesRequest, c.appendMessages.bind(c)),
    getSearchContext: bind(sessions.GetSearchContextRequest, c.getSearchContext.bind(c)),
    createWorkspace: bind(sessions.CreateWorkspaceRequest, c.createWorkspace.bind(c)),
    setActiveWorkspace: bind(sessions.SetActiveWorkspaceRequest, c.setActiveWorkspace.bind(c)),
    getActiveWorkspace: bind(sessions.GetActiveWorkspaceRequest, c.getActiveWorkspace.bind(c)),
    resolveWorkspace: bind(sessions.ResolveWorkspaceRequest, c.resolveWorkspace.bind(c)),
  };
}
