/**
 * One contract suite, three transports: a port over real gRPC (port 0), the same port called
 * in process (`inProcessPort`) and over a MessagePort (`ThreadChannel` against `serveOverPort`,
 * as the search thread serves the main thread; here both ends in one thread) must behave alike — answers, deadlines, cancellation, error
 * mapping, retries, request ids, the server's metrics labels, and messages that neither side
 * can change under the other.
 */
import { MessageChannel } from 'node:worker_threads';
import { status } from '@grpc/grpc-js';
import { common, ledger } from '@ctxmesh/proto';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { Budget, Code, CtxError, grpcPort, implement, inProcessPort, serveOverPort, ThreadChannel, type CallObservation, type Handlers, type MountedService, type Port, type PortOptions } from '../src';

const log = pino({ level: 'silent' });
const identity: common.Identity = { accountId: 'a', userId: 'u', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' };
const request = (): ledger.BeginTurnRequest => ({ identity: { ...identity }, sessionId: 's', dedupTurns: 3 });

type BeginTurn = Handlers<ledger.LedgerServiceServer>['beginTurn'];
let beginTurn: BeginTurn;
const observed: CallObservation[] = [];
const seen: Array<{ requestId: string; remainingMs: number; signal: AbortSignal }> = [];

const mounted: MountedService = {
  name: 'ctxmesh.ledger.v1.LedgerService',
  definition: ledger.LedgerServiceService,
  implementation: implement<ledger.LedgerServiceServer>(
    ledger.LedgerServiceService,
    {
      beginTurn: (req, ctx) => {
        seen.push({ requestId: ctx.requestId, remainingMs: ctx.budget.remainingMs(), signal: ctx.budget.signal });
        return beginTurn(req, ctx);
      },
    },
    { domain: 'ledger', log, observe: (o) => observed.push(o) },
  ),
};

let srv: TestServer;
const wire = new MessageChannel();
const unserve = serveOverPort(wire.port1, [mounted]);
const thread = new ThreadChannel(wire.port2);
beforeAll(async () => {
  srv = await startTestServer([mounted]);
});
afterAll(async () => {
  await srv.close();
  unserve();
  thread.close();
  wire.port1.close();
});
beforeEach(() => {
  observed.length = 0;
  seen.length = 0;
  beginTurn = async () => ({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
});

type LedgerPort = Port<ledger.LedgerServiceClient> & { close(): void };
const transports: Array<[string, (opts: PortOptions<ledger.LedgerServiceClient>) => LedgerPort]> = [
  ['grpc', (opts) => grpcPort(ledger.LedgerServiceClient, srv.address, opts)],
  ['in-process', (opts) => inProcessPort<ledger.LedgerServiceClient>(mounted, opts)],
  ['a thread channel', (opts) => thread.port<ledger.LedgerServiceClient>(ledger.LedgerServiceService, opts)],
];

/** The first observation of the server adapter, once the handler has finished. */
async function observation(): Promise<CallObservation> {
  for (let i = 0; i < 200 && observed.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  return observed[0]!;
}

/** Make the handler hold each call until its budget aborts; resolves once a call has started. */
function holdUntilAborted(): Promise<void> {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  beginTurn = (_req, ctx) =>
    new Promise((_resolve, reject) => {
      ctx.budget.signal.addEventListener('abort', () => reject(ctx.budget.signal.reason));
      started();
    });
  return running;
}

async function failure(p: Promise<unknown>): Promise<CtxError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof CtxError)) throw new Error(`expected a CtxError, got ${String(err)}`);
  return err;
}

describe.each(transports)('port over %s', (_name, open) => {
  let port: LedgerPort;
  beforeEach(() => {
    port = open({ domain: 'ledger', methods: { beginTurn: { pass: [Code.NOT_FOUND] } }, defaults: { random: () => 0 } });
  });
  afterEach(() => port.close());

  it('answers with the handler\'s response, under the caller\'s deadline and request id', async () => {
    beginTurn = async (req) => ({ status: 'ok', turn: req.dedupTurns + 1, cooledUris: [req.sessionId], cooledTurns: [7] });
    const budget = Budget.ofMs(2000, { requestId: 'r-1' });
    await expect(port.beginTurn(request(), budget)).resolves.toEqual({ status: 'ok', turn: 4, cooledUris: ['s'], cooledTurns: [7] });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.requestId).toBe('r-1');
    expect(seen[0]!.remainingMs).toBeLessThanOrEqual(2000);
    expect(seen[0]!.remainingMs).toBeGreaterThan(1000);
    expect(await observation()).toEqual(expect.objectContaining({ service: 'ledger', method: 'beginTurn', code: 'OK' }));
  });

  it('fails DEADLINE_EXCEEDED when the handler outlives the deadline, and the handler\'s budget is cut', async () => {
    beginTurn = (_req, ctx) => new Promise((_resolve, reject) => ctx.budget.signal.addEventListener('abort', () => reject(ctx.budget.signal.reason)));
    const err = await failure(port.beginTurn(request(), Budget.ofMs(60)));
    expect(err.code).toBe(status.DEADLINE_EXCEEDED);
    // The server side ends by its own timer or by the call's cancellation, whichever fires first (as grpc-js's server does).
    expect(['DEADLINE_EXCEEDED', 'CANCELLED']).toContain((await observation()).code);
    expect(seen[0]!.signal.aborted).toBe(true);
  });

  it('fails CANCELLED when the caller cancels, and the handler\'s budget is cancelled', async () => {
    const caller = new AbortController();
    const running = holdUntilAborted();
    const call = failure(port.beginTurn(request(), Budget.ofMs(5000, { signals: [caller.signal] })));
    await running;
    caller.abort();
    const err = await call;
    expect(err.code).toBe(status.CANCELLED);
    expect(await observation()).toEqual(expect.objectContaining({ method: 'beginTurn', code: 'CANCELLED' }));
    expect(seen[0]!.signal.aborted).toBe(true);
  });

  it.each([
    ['a passed code keeps its code, reason, domain and metadata', () => new CtxError(status.NOT_FOUND, 'SESSION_GONE', 'no such session', { metadata: { session: 's' } }), status.NOT_FOUND, 'SESSION_GONE', { session: 's' }, 'NOT_FOUND'],
    ['a code not passed becomes INTERNAL naming the downstream code and reason', () => new CtxError(status.INVALID_ARGUMENT, 'BAD_TURN', 'bad'), status.INTERNAL, 'INTERNAL', { downstream_code: 'INVALID_ARGUMENT', downstream_reason: 'BAD_TURN' }, 'INVALID_ARGUMENT'],
    ['an unexpected error is INTERNAL, its message kept private', () => new Error('secret detail'), status.INTERNAL, 'INTERNAL', { downstream_code: 'INTERNAL', downstream_reason: 'INTERNAL' }, 'INTERNAL'],
    ['UNAVAILABLE always passes', () => new CtxError(status.UNAVAILABLE, 'STORE_DOWN', 'down'), status.UNAVAILABLE, 'STORE_DOWN', {}, 'UNAVAILABLE'],
  ] as const)('error mapping: %s', async (_title, thrown, code, reason, metadata, observedCode) => {
    beginTurn = async () => {
      throw thrown();
    };
    // Large enough a budget for retries of UNAVAILABLE to run out on their own (three at most).
    const err = await failure(port.beginTurn(request(), Budget.ofMs(5000)));
    expect([Code[err.code], err.reason, err.metadata]).toEqual([Code[code], reason, metadata]);
    expect(err.message).not.toContain('secret');
    if (code !== status.INTERNAL) expect(err.domain).toBe('ledger');
    expect(observed[0]).toEqual(expect.objectContaining({ service: 'ledger', method: 'beginTurn', code: observedCode }));
  });

  it('retries UNAVAILABLE and answers with the retry\'s response', async () => {
    let calls = 0;
    beginTurn = async () => {
      if (++calls === 1) throw new CtxError(status.UNAVAILABLE, 'STORE_DOWN', 'down');
      return { status: 'ok', turn: 2, cooledUris: [], cooledTurns: [] };
    };
    await expect(port.beginTurn(request(), Budget.ofMs(5000))).resolves.toEqual({ status: 'ok', turn: 2, cooledUris: [], cooledTurns: [] });
    expect(calls).toBe(2);
    expect(observed.map((o) => o.code)).toEqual(['UNAVAILABLE', 'OK']);
  });

  it('gives each side its own messages: neither can change an object the other holds', async () => {
    const kept: ledger.BeginTurnResponse = { status: 'ok', turn: 1, cooledUris: ['a'], cooledTurns: [1] };
    let received: ledger.BeginTurnRequest | undefined;
    beginTurn = async (req) => {
      received = req;
      req.sessionId = 'changed by the handler';
      return kept;
    };
    const req = request();
    const res = await port.beginTurn(req, Budget.ofMs(2000));
    expect(req.sessionId).toBe('s');
    res.cooledUris.push('changed by the caller');
    expect(kept.cooledUris).toEqual(['a']);
    req.dedupTurns = 99;
    expect(received!.dedupTurns).toBe(3);
  });

  it('fails DEADLINE_EXCEEDED without calling the handler when the budget is already spent', async () => {
    const err = await failure(port.beginTurn(request(), Budget.ofMs(0)));
    expect(err.code).toBe(status.DEADLINE_EXCEEDED);
    expect(seen).toHaveLength(0);
  });
});

describe('a thread channel', () => {
  it('fails a call in flight and every later one UNAVAILABLE once the serving thread has gone, as a lost connection does', async () => {
    const w = new MessageChannel();
    const stop = serveOverPort(w.port1, [mounted]);
    const channel = new ThreadChannel(w.port2);
    const port = channel.port<ledger.LedgerServiceClient>(ledger.LedgerServiceService, { domain: 'ledger', defaults: { retry: false } });
    const running = holdUntilAborted();
    const inFlight = failure(port.beginTurn(request(), Budget.ofMs(5000)));
    await running;
    channel.fail('the search thread has stopped');
    expect((await inFlight).code).toBe(status.UNAVAILABLE);
    expect((await failure(port.beginTurn(request(), Budget.ofMs(5000)))).code).toBe(status.UNAVAILABLE);
    // The serving side's call is cancelled when it stops serving.
    stop();
    expect(seen[0]!.signal.aborted).toBe(true);
    channel.close();
    w.port1.close();
  });
});
