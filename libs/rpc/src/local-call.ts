/**
 * The call objects of the local transports ({@link inProcessPort} in one thread, the thread
 * transport across worker threads): what grpc-js presents to `implement` on the server side and
 * to `callUnary` on the client side, without a channel.
 */
import { EventEmitter } from 'node:events';
import { Metadata, status, type CallOptions, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { SpanStatusCode, type Span } from '@opentelemetry/api';

/** The server side of one in-process call, as grpc-js's ServerUnaryCall presents it to `implement`. */
export class InProcessServerCall extends EventEmitter {
  cancelled = false;
  constructor(
    readonly request: unknown,
    readonly metadata: Metadata,
    private readonly deadline: Date | number | undefined,
  ) {
    super();
  }

  getDeadline(): Date | number {
    return this.deadline ?? Infinity;
  }

  getPeer(): string {
    return 'in-process';
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
  }
}

/** The client side of one in-process call, as grpc-js's ClientUnaryCall presents it to `callUnary`. */
export class InProcessClientCall extends EventEmitter {
  constructor(private readonly onCancel: () => void) {
    super();
  }

  cancel(): void {
    this.onCancel();
  }

  getPeer(): string {
    return 'in-process';
  }
}

export function serviceError(code: status, details: string, metadata: Metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata });
}

export function deadlineMs(deadline: CallOptions['deadline'] | undefined): number {
  if (deadline === undefined) return Infinity;
  return deadline instanceof Date ? deadline.getTime() : Number(deadline);
}


/** One client call of a local transport, under way (see {@link startLocalCall}). */
export interface LocalCall {
  /** What `callUnary` holds (`cancel()`, the `status` event). */
  call: ClientUnaryCall;
  /** End the call with an error or a response (the first end wins); the callback runs in a later microtask, as grpc-js answers. */
  finish(err: ServiceError | null, res: unknown): void;
  /** Whether it has ended already (its deadline was spent, or its parent cancelled, before it started). */
  readonly done: boolean;
}

/**
 * The client side's lifecycle of one call of a local transport, as grpc-js runs it: the client
 * span ended with the status, the caller's `cancel()`, the deadline (DEADLINE_EXCEEDED when it
 * passes, at once when it already has) and the parent call's cancellation (grpc-js's
 * propagate_flags default). What the transport does to stop the serving side is `onCancel`.
 * @param onEnd run once when the call ends, however
 */
export function startLocalCall(span: Span, options: CallOptions, callback: (err: ServiceError | null, res?: unknown) => void, onCancel: () => void, onEnd: () => void = () => undefined): LocalCall {
  let done = false;
  const cleanups: Array<() => void> = [];
  const finish = (err: ServiceError | null, res: unknown): void => {
    if (done) return;
    done = true;
    onEnd();
    for (const c of cleanups.splice(0)) c();
    span.setAttribute('rpc.grpc.status_code', err ? err.code : status.OK);
    if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.details });
    span.end();
    // grpc-js answers from its own event-loop turn, never within the caller's stack.
    queueMicrotask(() => {
      call.emit('status', { code: err ? err.code : status.OK, details: err ? err.details : 'OK', metadata: err ? err.metadata : new Metadata() });
      callback(err, res);
    });
  };
  const cancelWith = (code: status, details: string): void => {
    if (done) return;
    onCancel();
    finish(serviceError(code, details), undefined);
  };
  const call = new InProcessClientCall(() => cancelWith(status.CANCELLED, 'Cancelled on client'));
  const left = deadlineMs(options.deadline) - Date.now();
  if (left <= 0) cancelWith(status.DEADLINE_EXCEEDED, 'Deadline exceeded');
  else if (Number.isFinite(left)) {
    const timer = setTimeout(() => cancelWith(status.DEADLINE_EXCEEDED, 'Deadline exceeded'), left);
    timer.unref();
    cleanups.push(() => clearTimeout(timer));
  }
  const parent = options.parent as unknown as (EventEmitter & { cancelled?: boolean }) | undefined;
  if (parent && !done) {
    const onParentCancel = () => cancelWith(status.CANCELLED, 'Cancelled by the parent call');
    if (parent.cancelled) onParentCancel();
    else {
      parent.once('cancelled', onParentCancel);
      cleanups.push(() => parent.removeListener('cancelled', onParentCancel));
    }
  }
  return {
    call: call as unknown as ClientUnaryCall,
    finish,
    get done() {
      return done;
    },
  };
}
