/**
 * The server adapter over real gRPC on port 0: error model on the wire, UNIMPLEMENTED,
 * health (readiness vs liveness), deadline propagation across hops with cancellation of
 * downstream work, and graceful shutdown.
 */
import { status, type ServiceError } from '@grpc/grpc-js';
import { ledger } from '@ctxmesh/proto';
import { startTestServer, eventually, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { Budget, callUnary, checkHealth, closeHealthClients, connect, CtxError, errorDetailsOf, implement, LIVENESS, type Handlers } from '../src';

const log = pino({ level: 'silent' });
const SERVICE = 'ctxmesh.ledger.v1.LedgerService';

function mount(handlers: Partial<Handlers<ledger.LedgerServiceServer>>, shutdownSignal?: AbortSignal) {
  return {
    name: SERVICE,
    definition: ledger.LedgerServiceService,
    implementation: implement(ledger.LedgerServiceService, handlers, { domain: 'ledger', log, shutdownSignal }),
  };
}

function rawCall(address: string, deadlineMs = 2000): Promise<{ err: ServiceError | null; res?: ledger.BeginTurnResponse }> {
  const client = connect(ledger.LedgerServiceClient, address);
  return new Promise((resolve) =>
    client.beginTurn({ identity: undefined, sessionId: 's', dedupTurns: 1 }, { deadline: new Date(Date.now() + deadlineMs) } as never, (err, res) => {
      client.close();
      resolve({ err, res });
    }),
  );
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => closeHealthClients());

describe('rpc server adapter', () => {
  it('LedgerService.RecordServed - no handler - UNIMPLEMENTED', async () => {
    const srv = await startTestServer([mount({ beginTurn: async () => ({ status: 'ok', turn: 0, cooledUris: [], cooledTurns: [] }) })]);
    servers.push(srv);
    const client = connect(ledger.LedgerServiceClient, srv.address);
    const err = await new Promise<ServiceError | null>((r) =>
      client.recordServed({ identity: undefined, sessionId: 's', dedupTurns: 0, turn: 0, entries: [] }, (e) => r(e)),
    );
    client.close();
    expect(err?.code).toBe(status.UNIMPLEMENTED);
  });

  it('LedgerService.BeginTurn - CtxError - its code, message and ErrorInfo', async () => {
    const srv = await startTestServer([
      mount({
        beginTurn: async () => {
          throw new CtxError(status.NOT_FOUND, 'SESSION_NOT_FOUND', 'no session s', { metadata: { session_id: 's' } });
        },
      }),
    ]);
    servers.push(srv);
    const { err } = await rawCall(srv.address);
    expect(err?.code).toBe(status.NOT_FOUND);
    expect(err?.details).toBe('no session s');
    expect(errorDetailsOf(err!)).toEqual({ reason: 'SESSION_NOT_FOUND', domain: 'ledger', metadata: { session_id: 's' } });
  });

  // Regression (issue 12, item 3): a message echoing a 65,000-character input made the
  // trailers too large; the call hung until its deadline and stalled every other call on the
  // same connection.
  it('LedgerService.BeginTurn - CtxError with a huge message and metadata - answered at once, clipped, the channel keeps working', async () => {
    const huge = 'a'.repeat(100_000);
    const srv = await startTestServer([
      mount({
        beginTurn: async (req) => {
          if (req.sessionId === 'ok') return { status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] };
          throw new CtxError(status.INVALID_ARGUMENT, 'INVALID_WORKSPACE', `invalid workspace slug "${huge}"`, { metadata: { workspace: huge } });
        },
      }),
    ]);
    servers.push(srv);
    const client = connect(ledger.LedgerServiceClient, srv.address);
    const call = (sessionId: string) =>
      new Promise<{ err: ServiceError | null; res?: ledger.BeginTurnResponse }>((resolve) =>
        client.beginTurn({ identity: undefined, sessionId, dedupTurns: 1 }, { deadline: new Date(Date.now() + 20_000) } as never, (err, res) => resolve({ err, res })),
      );
    try {
      const [bad, good] = await Promise.all([call('bad'), call('ok')]);
      expect(bad.err?.code).toBe(status.INVALID_ARGUMENT);
      expect(bad.err!.details.length).toBeLessThanOrEqual(1024);
      expect(bad.err!.details.endsWith('…')).toBe(true);
      expect(errorDetailsOf(bad.err!)?.metadata.workspace?.length).toBeLessThanOrEqual(256);
      expect(good.err).toBeNull();
      expect(good.res?.turn).toBe(1);
    } finally {
      client.close();
    }
  });

  it('LedgerService.BeginTurn - unknown error - INTERNAL without the cause', async () => {
    const srv = await startTestServer([
      mount({
        beginTurn: async () => {
          throw new Error('password=hunter2 leaked from a driver');
        },
      }),
    ]);
    servers.push(srv);
    const { err } = await rawCall(srv.address);
    expect(err?.code).toBe(status.INTERNAL);
    expect(err?.details).toBe('internal error');
    expect(JSON.stringify(err?.metadata.getMap())).not.toContain('hunter2');
  });

  it('health - readiness follows the dependency check, liveness does not', async () => {
    let depUp = false;
    const srv = await startTestServer([mount({})], { checkReady: async () => depUp });
    servers.push(srv);
    expect(await checkHealth(srv.address, '')).toBe(false);
    expect(await checkHealth(srv.address, SERVICE)).toBe(false);
    expect(await checkHealth(srv.address, LIVENESS)).toBe(true);
    depUp = true;
    await eventually(() => checkHealth(srv.address, ''), 2000);
    expect(await checkHealth(srv.address, SERVICE)).toBe(true);
    depUp = false;
    await eventually(async () => !(await checkHealth(srv.address, '')), 2000);
    expect(await checkHealth(srv.address, LIVENESS)).toBe(true);
  });

  describe('deadline propagation', () => {
    // hop 1 (A) forwards to hop 2 (B), which never answers on its own: it waits for its
    // budget to end and records that its work was cancelled.
    async function chain() {
      const seen: { bCancelled?: boolean; bDeadlineMs?: number; aError?: number } = {};
      const b = await startTestServer([
        mount({
          beginTurn: async (_req, ctx) => {
            seen.bDeadlineMs = ctx.budget.remainingMs();
            await new Promise<void>((resolve) => ctx.budget.signal.addEventListener('abort', () => resolve(), { once: true }));
            seen.bCancelled = true;
            throw new CtxError(status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'gave up');
          },
        }),
      ]);
      const bClient = connect(ledger.LedgerServiceClient, b.address);
      const a = await startTestServer([
        mount({
          beginTurn: async (req, ctx) => {
            try {
              return await callUnary(bClient.beginTurn.bind(bClient), req, ctx.budget, { domain: 'b' });
            } catch (err) {
              seen.aError = (err as CtxError).code;
              throw err;
            }
          },
        }),
      ]);
      servers.push(a, b);
      return { a, seen, close: () => bClient.close() };
    }

    it.each([
      ['budget expires at hop 2', 300, status.DEADLINE_EXCEEDED],
      ['tiny budget', 50, status.DEADLINE_EXCEEDED],
    ])('LedgerService.BeginTurn - %s - %s', async (_name, deadlineMs, wanted) => {
      const { a, seen, close } = await chain();
      const started = Date.now();
      const { err } = await rawCall(a.address, deadlineMs);
      expect(err?.code).toBe(wanted);
      // Hop 2 got the caller's deadline (not a fresh default) …
      expect(seen.bDeadlineMs).toBeLessThanOrEqual(deadlineMs);
      // … and its work was cancelled rather than left running.
      await eventually(() => seen.bCancelled === true, 2000);
      expect(Date.now() - started).toBeLessThan(5000);
      close();
    });

    it('a budget built from an HTTP timeout propagates as the grpc deadline', async () => {
      const { a, seen, close } = await chain();
      const aClient = connect(ledger.LedgerServiceClient, a.address);
      const budget = Budget.ofMs(200);
      await expect(
        callUnary(aClient.beginTurn.bind(aClient), { identity: undefined, sessionId: 's', dedupTurns: 0 }, budget, { domain: 'a' }),
      ).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
      await eventually(() => seen.bCancelled === true, 2000);
      expect(seen.aError).toBe(status.DEADLINE_EXCEEDED);
      aClient.close();
      close();
    });
  });

  it('shutdown - drains an in-flight call, then refuses new ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    const srv = await startTestServer([
      mount({
        beginTurn: async () => {
          entered = true;
          await gate;
          return { status: 'ok', turn: 7, cooledUris: [], cooledTurns: [] };
        },
      }),
    ]);
    const inflight = rawCall(srv.address, 5000);
    // The call is in flight once its handler runs (a fixed sleep raced a loaded machine).
    await eventually(() => entered, 2000);
    const stopping = srv.close();
    expect(await checkHealth(srv.address, '', 300)).toBe(false);
    release();
    const { err, res } = await inflight;
    expect(err).toBeNull();
    expect(res?.turn).toBe(7);
    await stopping;
    const after = await rawCall(srv.address, 500);
    expect(after.err?.code).toBe(status.UNAVAILABLE);
  });

  it('shutdown - forces a call that outlives the drain bound and aborts its budget', async () => {
    const ctl = new AbortController();
    let aborted = false;
    let entered = false;
    const srv = await startTestServer(
      [
        mount(
          {
            beginTurn: async (_req, ctx) => {
              entered = true;
              await new Promise<void>((resolve) => ctx.budget.signal.addEventListener('abort', () => resolve(), { once: true }));
              aborted = true;
              throw new CtxError(status.UNAVAILABLE, 'SHUTTING_DOWN', 'shutting down');
            },
          },
          ctl.signal,
        ),
      ],
      { shutdownGraceMs: 150, shutdownController: ctl },
    );
    const inflight = rawCall(srv.address, 10_000);
    await eventually(() => entered, 2000);
    await srv.close();
    const { err } = await inflight;
    expect(err).not.toBeNull();
    expect(aborted).toBe(true);
  });
});
