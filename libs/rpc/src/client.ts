/**
 * Outbound calls: a channel factory, and `callUnary`, which applies the caller's Budget
 * (deadline + parent), retries only UNAVAILABLE/RESOURCE_EXHAUSTED after a jittered backoff
 * when the budget can afford it, and translates downstream statuses deliberately (STYLE B6 "Clients").
 */
import { credentials, Metadata, status, type CallOptions, type Client, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import type { Budget } from './budget';
import { Code, CtxError, errorDetailsOf, Reasons } from './errors';

/** A generated client constructor. */
export type ClientConstructor<C extends Client> = new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object) => C;

/** Create a client for `address` (insecure: the mesh runs on loopback or a private network). */
export function connect<C extends Client>(Ctor: ClientConstructor<C>, address: string): C {
  return new Ctor(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
  });
}

/** The shape of a generated unary method (the 4-argument overload). */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** Options of one outbound call. */
export interface CallUnaryOptions {
  /** Domain of the downstream service (for messages). */
  domain: string;
  /**
   * Downstream codes to pass through unchanged (besides DEADLINE_EXCEEDED, CANCELLED,
   * UNAVAILABLE, which always pass). A downstream INVALID_ARGUMENT becomes INTERNAL unless
   * listed here — list it only where this service validated that exact caller input.
   */
  pass?: Code[];
  /** Retry UNAVAILABLE/RESOURCE_EXHAUSTED (idempotent calls only). @default true */
  retry?: boolean;
  /** Expected latency of the call in ms, used to decide whether a retry fits. @default 5 */
  expectedMs?: number;
  /** Request id sent as `x-request-id`. */
  requestId?: string;
  /** Uniform source in [0, 1) for the retry backoff's jitter (tests pin it). @default Math.random */
  random?: () => number;
}

const ALWAYS_PASS: Code[] = [status.DEADLINE_EXCEEDED, status.CANCELLED, status.UNAVAILABLE];
const RETRYABLE: Code[] = [status.UNAVAILABLE, status.RESOURCE_EXHAUSTED];
const BACKOFF_MS = [10, 40, 160];

/**
 * The wait before retry number `attempt + 1`, in whole ms, or undefined when the retries are used
 * up (three at most). The nominal waits are 10, 40 and 160 ms; each is drawn uniformly from
 * [nominal / 2, nominal) ("equal jitter"), so callers that failed together do not all come
 * back at the same instant, a wait never exceeds the nominal one that `canAfford` was sized
 * for, and none drops to zero (unlike full jitter) to hammer a server that just said
 * UNAVAILABLE.
 * @param attempt 0 for the first retry
 * @param random uniform source in [0, 1); @default Math.random
 */
export function retryBackoffMs(attempt: number, random: () => number = Math.random): number | undefined {
  const nominal = BACKOFF_MS[attempt];
  if (nominal === undefined) return undefined;
  // floor keeps the top below `nominal` (x · r < x for any r < 1 in floating point, but a sum can round up).
  return nominal / 2 + Math.floor((nominal / 2) * random());
}

/** A CANCELLED call this close to the caller's deadline was cut by the deadline. */
const DEADLINE_SLACK_MS = 25;

/** Call a unary method under a Budget; resolves with the response or rejects with CtxError. */
export async function callUnary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  request: Req,
  budget: Budget,
  opts: CallUnaryOptions,
): Promise<Res> {
  const retry = opts.retry ?? true;
  for (let attempt = 0; ; attempt++) {
    try {
      return await once(method, request, budget, opts);
    } catch (err) {
      const e = err as ServiceError;
      const backoff = retry && RETRYABLE.includes(e.code) ? retryBackoffMs(attempt, opts.random) : undefined;
      if (backoff !== undefined && budget.canAfford(backoff + (opts.expectedMs ?? 5))) {
        await new Promise((r) => setTimeout(r, backoff));
        continue;
      }
      // grpc-js may report a call cut by the parent's expiry as CANCELLED; what happened
      // to the request is that its deadline passed.
      // Timers fire with a few ms of slack, so "past the deadline" is read with a margin.
      if (e.code === status.CANCELLED && budget.remainingMs() <= DEADLINE_SLACK_MS) {
        throw new CtxError(status.DEADLINE_EXCEEDED, Reasons.DEADLINE_EXCEEDED, 'deadline exceeded', { cause: e, domain: opts.domain });
      }
      throw translate(e, opts);
    }
  }
}

function once<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, budget: Budget, opts: CallUnaryOptions): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const metadata = new Metadata();
    const requestId = opts.requestId || budget.requestId;
    if (requestId) metadata.set('x-request-id', requestId);
    const options = budget.grpc();
    const call = method(request, metadata, options, (err, res) => (err ? reject(err) : resolve(res)));
    // Without an inbound gRPC parent (the gateway), cancel explicitly when the budget aborts.
    if (!options.parent) {
      const sig = budget.signal;
      const onAbort = () => call.cancel();
      if (sig.aborted) call.cancel();
      else {
        sig.addEventListener('abort', onAbort, { once: true });
        call.on('status', () => sig.removeEventListener('abort', onAbort));
      }
    }
  });
}

/** Map a downstream failure to the CtxError this service raises. */
export function translate(err: ServiceError, opts: Pick<CallUnaryOptions, 'domain' | 'pass'>): CtxError {
  const details = errorDetailsOf(err);
  const passes = ALWAYS_PASS.includes(err.code) || (opts.pass ?? []).includes(err.code);
  if (passes) {
    return new CtxError(err.code, details?.reason ?? Reasons[(Code[err.code] as keyof typeof Reasons) ?? 'INTERNAL'] ?? Code[err.code], err.details || err.message, {
      cause: err,
      metadata: details?.metadata,
      domain: details?.domain ?? opts.domain,
    });
  }
  return new CtxError(status.INTERNAL, Reasons.INTERNAL, `${opts.domain} failed`, {
    cause: err,
    metadata: { downstream_code: Code[err.code] ?? String(err.code), ...(details ? { downstream_reason: details.reason } : {}) },
  });
}
