/**
 * Test doubles for the gateway's route tests: real gRPC servers on port 0 (the orchestrator
 * and the sessions service) answering scripted responses and recording what they received,
 * a scripted indexer on the real in-process event bus, and a harness that wires a gateway
 * app to them through the real gRPC clients.
 */
import { indexer, orchestrator, sessions } from '@ctxmesh/proto';
import { Code, CtxError, implement, type CallContext, type Handler } from '@ctxmesh/rpc';
import { InProcEventBus, type Delivery, type DoneNotice, type EventBus } from '@ctxmesh/stores';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp, orchestratorClient, sessionsClient, type GatewayDeps } from '../src';
import type { AuthConfig } from '../src/domain';

const silent = pino({ level: 'silent' });

/** One received call: request, request id metadata and how its budget ended (if it did). */
export interface Received<Req> {
  req: Req;
  requestId: string;
  /** Reason code of the handler's budget abort: CANCELLED or DEADLINE_EXCEEDED. */
  aborted?: string;
}

/** A scripted gRPC service. */
export interface Fake<H> {
  address: string;
  /** Replace handlers (unset ones answer UNIMPLEMENTED-like defaults of the fake). */
  script: Partial<H>;
  /** Flip readiness (health service ''); the test server polls it every 50 ms. */
  setReady(ready: boolean): void;
  close(): Promise<void>;
}

function record<Req>(list: Array<Received<Req>>, req: Req, ctx: CallContext): Received<Req> {
  const r: Received<Req> = { req, requestId: String(ctx.metadata.get('x-request-id')[0] ?? '') };
  const sig = ctx.budget.signal;
  const onAbort = () => (r.aborted = sig.reason instanceof CtxError ? Code[sig.reason.code] : String(sig.reason));
  if (sig.aborted) onAbort();
  else sig.addEventListener('abort', onAbort, { once: true });
  list.push(r);
  return r;
}

/** Resolve when the call's budget aborts (the gateway cancelled it or its deadline passed). */
export function untilAborted(ctx: CallContext): Promise<never> {
  return new Promise((_resolve, reject) => {
    const sig = ctx.budget.signal;
    if (sig.aborted) reject(sig.reason);
    else sig.addEventListener('abort', () => reject(sig.reason), { once: true });
  });
}

type OrchestratorHandlers = {
  search: Handler<orchestrator.SearchRequest, orchestrator.SearchResponse>;
  assembleContext: Handler<orchestrator.AssembleContextRequest, orchestrator.AssembleContextResponse>;
  readContent: Handler<orchestrator.ReadContentRequest, orchestrator.ReadContentResponse>;
};

/** Fake orchestrator plus what it received. */
export interface FakeOrchestrator extends Fake<OrchestratorHandlers> {
  search: Array<Received<orchestrator.SearchRequest>>;
  assemble: Array<Received<orchestrator.AssembleContextRequest>>;
  read: Array<Received<orchestrator.ReadContentRequest>>;
}

async function serve(services: Parameters<typeof startTestServer>[0], state: { ready: boolean }): Promise<TestServer> {
  return startTestServer(services, { checkReady: async () => state.ready, shutdownGraceMs: 500 });
}

/** Start a fake orchestrator. */
export async function fakeOrchestrator(): Promise<FakeOrchestrator> {
  const state = { ready: true };
  const fake = { search: [], assemble: [], read: [], script: {} } as unknown as FakeOrchestrator;
  const impl = implement<orchestrator.OrchestratorServiceServer>(
    orchestrator.OrchestratorServiceService,
    {
      search: async (req, ctx) => {
        record(fake.search, req, ctx);
        if (!fake.script.search) throw new CtxError(Code.UNIMPLEMENTED, 'UNSCRIPTED', 'search not scripted');
        return fake.script.search(req, ctx);
      },
      assembleContext: async (req, ctx) => {
        record(fake.assemble, req, ctx);
        if (!fake.script.assembleContext) throw new CtxError(Code.UNIMPLEMENTED, 'UNSCRIPTED', 'assembleContext not scripted');
        return fake.script.assembleContext(req, ctx);
      },
      readContent: async (req, ctx) => {
        record(fake.read, req, ctx);
        if (!fake.script.readContent) throw new CtxError(Code.NOT_FOUND, 'NOT_FOUND', `no such node: ${req.uri}`);
        return fake.script.readContent(req, ctx);
      },
    },
    { domain: 'orchestrator', log: silent },
  );
  const srv = await serve([{ name: 'ctxmesh.orchestrator.v1.OrchestratorService', definition: orchestrator.OrchestratorServiceService, implementation: impl }], state);
  fake.address = srv.address;
  fake.setReady = (r) => (state.ready = r);
  fake.close = () => srv.close();
  return fake;
}

type SessionsHandlers = { appendMessages: Handler<sessions.AppendMessagesRequest, sessions.AppendMessagesResponse> };

/** Fake sessions service plus what it received. */
export interface FakeSessions extends Fake<SessionsHandlers> {
  append: Array<Received<sessions.AppendMessagesRequest>>;
}

/** Start a fake sessions service; by default it counts messages per session. */
export async function fakeSessions(): Promise<FakeSessions> {
  const state = { ready: true };
  const counts = new Map<string, number>();
  const fake = { append: [], script: {} } as unknown as FakeSessions;
  const impl = implement<sessions.SessionsServiceServer>(
    sessions.SessionsServiceService,
    {
      appendMessages: async (req, ctx) => {
        record(fake.append, req, ctx);
        if (fake.script.appendMessages) return fake.script.appendMessages(req, ctx);
        const before = counts.get(req.sessionId) ?? 0;
        counts.set(req.sessionId, before + req.messages.length);
        return { seqs: req.messages.map((_, i) => before + i), messageCount: before + req.messages.length };
      },
    },
    { domain: 'sessions', log: silent },
  );
  const srv = await serve([{ name: 'ctxmesh.sessions.v1.SessionsService', definition: sessions.SessionsServiceService, implementation: impl }], state);
  fake.address = srv.address;
  fake.setReady = (r) => (state.ready = r);
  fake.close = () => srv.close();
  return fake;
}

/** What the scripted indexer does with one write: a notice to publish, or nothing (stays queued). */
export type IndexerScript = (op: indexer.WriteOp, d: Delivery) => Omit<DoneNotice, 'id'> | null;

/** A scripted indexer consuming `ctxmesh.ingest.>` and recording every delivery. */
export interface FakeIndexer {
  ops: Array<{ op: indexer.WriteOp; subject: string; id: string; key: string }>;
  script: IndexerScript;
  stop(): Promise<void>;
}

/** Consume the ingest subjects of `bus` as an indexer would (ack after the notice). */
export async function fakeIndexer(bus: EventBus, durable = 'indexer'): Promise<FakeIndexer> {
  const fake: FakeIndexer = { ops: [], script: () => ({ status: 'applied', contentHash: 'hash-1' }), stop: async () => undefined };
  const consumer = await bus.consume({ durable, subjects: ['ctxmesh.ingest.>'], maxDeliver: 3, ackWaitMs: 30_000 }, async (d) => {
    const op = indexer.WriteOp.decode(d.message.data);
    fake.ops.push({ op, subject: d.message.subject, id: d.message.id, key: d.message.key });
    const notice = fake.script(op, d);
    if (notice) await bus.notifyDone({ id: d.message.id, ...notice });
    await d.ack();
  });
  fake.stop = () => consumer.stop();
  return fake;
}

/** A gateway app wired to fakes through the real gRPC clients. */
export interface Harness {
  app: FastifyInstance;
  orch: FakeOrchestrator;
  sess: FakeSessions;
  bus: InProcEventBus;
  indexer: FakeIndexer;
  close(): Promise<void>;
}

/** Options of {@link harness}. */
export interface HarnessOptions {
  auth?: AuthConfig;
  deadlines?: GatewayDeps['deadlines'];
  /** Point the orchestrator client here instead of the fake (e.g. a closed port). */
  orchestratorAddr?: string;
  now?: () => number;
  /** Body limit, document limit and receive timeouts (defaults: the gateway's). */
  limits?: Pick<GatewayDeps, 'bodyLimitBytes' | 'maxDocumentBytes' | 'receive'>;
  /** The hook routes' settings (default: the gateway's). */
  hooks?: GatewayDeps['hooks'];
}

/** Start the fakes and build a ready app. */
export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const orch = await fakeOrchestrator();
  const sess = await fakeSessions();
  const bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
  const idx = await fakeIndexer(bus);
  const orchestrator = orchestratorClient(opts.orchestratorAddr ?? orch.address);
  const sessionsC = sessionsClient(sess.address);
  let n = 0;
  const app = buildApp({
    log: silent,
    auth: opts.auth ?? { mode: 'dev' },
    deadlines: opts.deadlines ?? { defaultMs: 10_000, maxMs: 20_000 },
    orchestrator,
    sessions: sessionsC,
    bus,
    version: '9.9.9',
    now: opts.now,
    newWriteId: () => `w-${++n}`,
    hooks: opts.hooks,
    ...opts.limits,
  });
  await app.ready();
  return {
    app,
    orch,
    sess,
    bus,
    indexer: idx,
    close: async () => {
      await app.close();
      orchestrator.close();
      sessionsC.close();
      await idx.stop();
      await bus.close();
      await Promise.all([orch.close(), sess.close()]);
    },
  };
}

/** An empty list-mode answer. */
export const EMPTY_SEARCH: orchestrator.SearchResponse = { memories: [], resources: [], skills: [], queryPlan: [], queryPlanReasoning: '', hasQueryPlan: false };
