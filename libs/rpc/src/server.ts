/**
 * The one server bootstrap every service uses (STYLE B7): typed unary handlers wrapped with
 * a per-call Budget and the error model, gRPC health checking (readiness under service ''
 * reflects dependencies, `liveness` reflects only the process), and graceful shutdown
 * (NOT_SERVING → drain in-flight calls → force after a bound).
 */
import {
  Server,
  ServerCredentials,
  status,
  type handleUnaryCall,
  type Metadata,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { setMaxListeners } from 'node:events';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import type { Logger } from 'pino';
import { Budget } from './budget';
import { Code, CtxError, Reasons, codeName, toStatus } from './errors';

/** Per-call context handed to every handler. */
export interface CallContext {
  /** Remaining time of this call; pass it to every downstream call. */
  budget: Budget;
  /** Logger bound to the service, method and request id. */
  log: Logger;
  /** Inbound metadata. */
  metadata: Metadata;
  /** Request id from `x-request-id` metadata (or a generated one). */
  requestId: string;
}

/** A unary handler: request in, response out; throws CtxError for known failures. */
export type Handler<Req, Res> = (req: Req, ctx: CallContext) => Promise<Res>;

/** Keys of a generated `…Server` interface without grpc-js's string index signature. */
type MethodKeys<S> = keyof { [K in keyof S as string extends K ? never : K]: S[K] };

/** Handlers for a generated `…Server` interface. */
export type Handlers<S> = {
  [K in MethodKeys<S>]: S[K] extends handleUnaryCall<infer Req, infer Res> ? Handler<Req, Res> : never;
};

/** What the server adapter reports per call (metrics hook). */
export interface CallObservation {
  /** Service domain, e.g. `gather`. */
  service: string;
  /** RPC method name. */
  method: string;
  /** Status code name, e.g. `OK`. */
  code: string;
  /** Handler wall time in ms. */
  durationMs: number;
}

/** Options of `implement`. */
export interface ImplementOptions {
  /** Service domain used in ErrorInfo and logs (kebab-case service name). */
  domain: string;
  /** Logger. */
  log: Logger;
  /** Budget for calls without a deadline, in ms. @default 30000 */
  defaultDeadlineMs?: number;
  /** Upper bound on any call's budget, in ms. @default 120000 */
  maxDeadlineMs?: number;
  /** Aborted when the server is forced down. */
  shutdownSignal?: AbortSignal;
  /** Metrics hook. */
  observe?: (o: CallObservation) => void;
}

let requestCounter = 0;

/**
 * Wrap typed handlers as a grpc-js service implementation. RPCs without a handler answer
 * UNIMPLEMENTED (they exist in the contract; a later change fills them). Name the generated
 * server interface explicitly: `implement<gather.GatherServiceServer>(gather.GatherServiceService, …)`.
 */
export function implement<S extends UntypedServiceImplementation>(
  definition: object,
  handlers: Partial<Handlers<S>>,
  opts: ImplementOptions,
): S {
  // Every in-flight call that asks for its budget's signal listens on the shared shutdown
  // signal; under load that is many listeners by design, not a leak.
  if (opts.shutdownSignal) setMaxListeners(0, opts.shutdownSignal);
  const impl: Record<string, handleUnaryCall<unknown, unknown>> = {};
  for (const [method] of Object.entries(definition)) {
    const handler = (handlers as Record<string, Handler<unknown, unknown> | undefined>)[method];
    impl[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      void runUnary(method, handler, call, callback, opts);
    };
  }
  return impl as unknown as S;
}

async function runUnary(
  method: string,
  handler: Handler<unknown, unknown> | undefined,
  call: ServerUnaryCall<unknown, unknown>,
  callback: sendUnaryData<unknown>,
  opts: ImplementOptions,
): Promise<void> {
  const started = performance.now();
  const idHeader = call.metadata.get('x-request-id')[0];
  const requestId = typeof idHeader === 'string' && idHeader ? idHeader : `${opts.domain}-${++requestCounter}`;
  const log = opts.log.child({ rpc: method, request_id: requestId });
  const budget = Budget.fromCall(call, {
    defaultMs: opts.defaultDeadlineMs ?? 30_000,
    maxMs: opts.maxDeadlineMs ?? 120_000,
    signals: opts.shutdownSignal ? [opts.shutdownSignal] : [],
    requestId,
  });
  let code: Code = status.OK;
  try {
    if (!handler) {
      throw new CtxError(status.UNIMPLEMENTED, Reasons.UNIMPLEMENTED, `${opts.domain}.${method} is not implemented yet`);
    }
    budget.throwIfExhausted();
    const res = await handler(call.request, { budget, log, metadata: call.metadata, requestId });
    callback(null, res);
  } catch (err) {
    const e = classify(err, budget, log, opts.domain);
    code = e.code;
    callback(toStatus(e, opts.domain));
  } finally {
    budget.dispose();
    opts.observe?.({ service: opts.domain, method, code: codeName(code), durationMs: performance.now() - started });
  }
}

/** Turn anything thrown by a handler into the CtxError that goes on the wire. */
function classify(err: unknown, budget: Budget, log: Logger, domain: string): CtxError {
  if (err instanceof CtxError) {
    if (err.code === status.INTERNAL || err.code === status.UNKNOWN) log.error({ err, cause: err.cause }, 'internal error');
    return err;
  }
  // A handler that failed because its budget ran out reports the budget, not the symptom.
  if (budget.exhausted) {
    const timedOut = budget.remainingMs() <= 0;
    return new CtxError(
      timedOut ? status.DEADLINE_EXCEEDED : status.CANCELLED,
      timedOut ? Reasons.DEADLINE_EXCEEDED : Reasons.CANCELLED,
      timedOut ? 'deadline exceeded' : 'cancelled',
      { domain },
    );
  }
  log.error({ err }, 'internal error');
  return new CtxError(status.INTERNAL, Reasons.INTERNAL, 'internal error', { domain });
}

/** A service to mount: generated definition + implementation. */
export interface MountedService {
  /** Fully qualified gRPC service name (health is reported under it too). */
  name: string;
  /** Generated service definition (the `…Service` const of @ctxmesh/proto). */
  definition: object;
  /** Implementation (from `implement`). */
  implementation: UntypedServiceImplementation;
}

/** Options of `startServer`. */
export interface StartServerOptions {
  /** Service domain (kebab-case), for logs. */
  domain: string;
  /** Services to mount. */
  services: MountedService[];
  /** Port (0 = any free port). */
  port: number;
  /** Bind host. @default 127.0.0.1 */
  host?: string;
  /** Logger. */
  log: Logger;
  /**
   * Dependency readiness check, polled while running; readiness (service '') is SERVING
   * only while it returns true. Absent = always ready.
   */
  checkReady?: () => Promise<boolean>;
  /** Poll interval of checkReady in ms. @default 2000 */
  readyPollMs?: number;
  /** Drain bound at shutdown in ms before in-flight calls are forced. @default 10000 */
  shutdownGraceMs?: number;
  /** Controller aborted when the server is forced down (pass its signal to `implement`). */
  shutdownController?: AbortController;
}

/** A running server. */
export interface RunningServer {
  /** Bound port. */
  port: number;
  /** `host:port`. */
  address: string;
  /** The grpc-js server. */
  server: Server;
  /** The services it mounts (a caller in the same thread may call them in process: {@link inProcessPort}). */
  services: readonly MountedService[];
  /** Health implementation. */
  health: HealthImplementation;
  /** Current readiness. */
  isReady(): boolean;
  /** Re-run the readiness check now. */
  refreshReadiness(): Promise<boolean>;
  /** NOT_SERVING → drain → force after the grace bound. Idempotent. */
  shutdown(): Promise<void>;
}

/** Liveness service name (process only; a dependency blip never restarts a pod). */
export const LIVENESS = 'liveness';

/** Bind, mount health, flip readiness from the dependency check. */
export async function startServer(opts: StartServerOptions): Promise<RunningServer> {
  const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  const statusMap: Record<string, ServingStatus> = { '': 'NOT_SERVING', [LIVENESS]: 'SERVING' };
  for (const s of opts.services) statusMap[s.name] = 'NOT_SERVING';
  const health = new HealthImplementation(statusMap);
  health.addToServer(server);
  for (const s of opts.services) server.addService(s.definition as ServiceDefinition, s.implementation);

  const host = opts.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${opts.port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );

  let ready = false;
  let stopping = false;
  const setReady = (r: boolean) => {
    if (stopping) return;
    if (r !== ready) opts.log.info({ ready: r }, r ? 'serving' : 'not serving');
    ready = r;
    const st: ServingStatus = r ? 'SERVING' : 'NOT_SERVING';
    health.setStatus('', st);
    for (const s of opts.services) health.setStatus(s.name, st);
  };
  const refreshReadiness = async () => {
    let ok = true;
    if (opts.checkReady) {
      try {
        ok = await opts.checkReady();
      } catch (err) {
        opts.log.warn({ err }, 'readiness check failed');
        ok = false;
      }
    }
    setReady(ok);
    return ok;
  };
  await refreshReadiness();
  const poll = opts.checkReady ? setInterval(() => void refreshReadiness(), opts.readyPollMs ?? 2000) : undefined;
  poll?.unref();

  let shuttingDown: Promise<void> | undefined;
  const shutdown = () => {
    shuttingDown ??= (async () => {
      if (poll) clearInterval(poll);
      setReady(false);
      stopping = true;
      const grace = opts.shutdownGraceMs ?? 10_000;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          opts.log.warn({ graceMs: grace }, 'drain bound reached; forcing shutdown');
          opts.shutdownController?.abort(new CtxError(status.UNAVAILABLE, Reasons.SHUTTING_DOWN, 'server shutting down'));
          server.forceShutdown();
          resolve();
        }, grace);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      health.setStatus(LIVENESS, 'NOT_SERVING');
      opts.log.info('stopped');
    })();
    return shuttingDown;
  };

  opts.log.info({ port }, 'listening');
  return { port, address: `${host}:${port}`, server, services: opts.services, health, isReady: () => ready, refreshReadiness, shutdown };
}
