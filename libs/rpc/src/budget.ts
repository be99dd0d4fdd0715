/**
 * `Budget`: the time a request has left, passed explicitly to every downstream call
 * (STYLE B5). It links the deadline, the caller's cancel and the server's shutdown into one
 * `signal`, and turns into grpc-js call options (`deadline` + `parent`) so every hop takes
 * min(own cap, inbound deadline) and is cancelled with its parent.
 */
import type { CallOptions, ServerUnaryCall } from '@grpc/grpc-js';

/** An inbound call (grpc-js does not export its InboundCall type). */
export type InboundCall = ServerUnaryCall<any, any>;
import { Code, CtxError, Reasons } from './errors';

/** Clock source, replaceable in tests. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };

/** Options when creating a root budget. */
export interface BudgetOptions {
  /** Signals whose abort cancels this budget (client disconnect, server shutdown). */
  signals?: AbortSignal[];
  /** The inbound gRPC call, used as `parent` for outbound calls. */
  call?: InboundCall;
  /** Clock (tests). */
  clock?: Clock;
  /** Request id carried to downstream calls as `x-request-id`. */
  requestId?: string;
}

/** Options to derive a budget from an inbound deadline. */
export interface InboundOptions extends BudgetOptions {
  /** Budget when the caller sent no deadline, in ms. */
  defaultMs: number;
  /** Upper bound on any inbound budget, in ms. */
  maxMs: number;
}

/** Remaining time and cancellation of one request. */
export class Budget {
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  /** Request id sent downstream as `x-request-id` ("" when unknown). */
  readonly requestId: string;
  private readonly clock: Clock;
  private readonly sources: AbortSignal[];
  private readonly call?: InboundCall;
  private controller?: AbortController;
  private timer?: NodeJS.Timeout;
  private readonly cleanups: Array<() => void> = [];

  private constructor(deadline: number, opts: BudgetOptions) {
    this.deadline = deadline;
    this.requestId = opts.requestId ?? '';
    this.clock = opts.clock ?? systemClock;
    this.sources = opts.signals ?? [];
    this.call = opts.call;
  }

  /** A budget of `ms` from now. */
  static ofMs(ms: number, opts: BudgetOptions = {}): Budget {
    const clock = opts.clock ?? systemClock;
    return new Budget(clock.now() + Math.max(0, ms), opts);
  }

  /** A budget ending at `deadline` (ms since the epoch). */
  static until(deadline: number, opts: BudgetOptions = {}): Budget {
    return new Budget(deadline, opts);
  }

  /**
   * The budget of an inbound gRPC call: its deadline (grpc-timeout), or `defaultMs` when
   * it sent none, never more than `maxMs`. Cancelled when the caller cancels.
   */
  static fromCall(call: InboundCall, opts: InboundOptions): Budget {
    const clock = opts.clock ?? systemClock;
    const now = clock.now();
    const raw = call.getDeadline();
    const inbound = raw instanceof Date ? raw.getTime() : Number(raw);
    const cap = now + opts.maxMs;
    const deadline = Number.isFinite(inbound) ? Math.min(inbound, cap) : Math.min(now + opts.defaultMs, cap);
    const onCancel = new AbortController();
    const cancelled = () => onCancel.abort(new CtxError(Code.CANCELLED, Reasons.CANCELLED, 'call cancelled by the client'));
    call.once('cancelled', cancelled);
    const budget = new Budget(deadline, { ...opts, call, signals: [...(opts.signals ?? []), onCancel.signal] });
    budget.cleanups.push(() => call.removeListener('cancelled', cancelled));
    return budget;
  }

  /**
   * A budget from a relative timeout header (`X-Request-Timeout-Ms`, NATS headers):
   * clamped to `maxMs`, `defaultMs` when absent or unparsable.
   */
  static fromTimeoutHeader(value: string | undefined, opts: InboundOptions): Budget {
    const ms = value !== undefined && /^\d+$/.test(value.trim()) ? Number(value.trim()) : opts.defaultMs;
    return Budget.ofMs(Math.min(ms, opts.maxMs), opts);
  }

  /** Milliseconds left (0 when past the deadline). Like connect's `timeoutMs()`. */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.clock.now());
  }

  /** True when cancelled or past the deadline. */
  get exhausted(): boolean {
    return this.remainingMs() <= 0 || this.sources.some((s) => s.aborted) || (this.controller?.signal.aborted ?? false);
  }

  /** True when at least `ms` are left and nothing cancelled the request. */
  canAfford(ms: number): boolean {
    return !this.exhausted && this.remainingMs() >= ms;
  }

  /**
   * A child budget: deadline = min(parent − reserveMs, now + capMs), cancelled with the
   * parent. Optional work runs under a capped child so it cannot consume the whole request.
   */
  child(capMs?: number, reserveMs = 0): Budget {
    const now = this.clock.now();
    let deadline = this.deadline - reserveMs;
    if (capMs !== undefined) deadline = Math.min(deadline, now + capMs);
    return new Budget(deadline, { clock: this.clock, call: this.call, requestId: this.requestId, signals: [...this.sources, ...(this.controller ? [this.controller.signal] : [])] });
  }

  /**
   * Abort signal: fires on the deadline, a client cancel or server shutdown. Created lazily
   * (most calls only need `grpc()`), so call `dispose()` when a root budget is done.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      for (const s of this.sources) {
        if (s.aborted) {
          controller.abort(s.reason);
          break;
        }
        const onAbort = () => controller.abort(s.reason);
        s.addEventListener('abort', onAbort, { once: true });
        this.cleanups.push(() => s.removeEventListener('abort', onAbort));
      }
      if (!controller.signal.aborted) {
        const left = this.remainingMs();
        const expire = () =>
          controller.abort(new CtxError(Code.DEADLINE_EXCEEDED, Reasons.DEADLINE_EXCEEDED, 'deadline exceeded'));
        if (left <= 0) expire();
        else {
          this.timer = setTimeout(expire, left);
          this.timer.unref();
        }
      }
    }
    return this.controller.signal;
  }

  /**
   * grpc-js call options: `deadline` plus the inbound call as `parent`, so grpc-js takes
   * the minimum and propagates cancellation.
   */
  grpc(parent?: InboundCall): Partial<CallOptions> {
    const p = parent ?? this.call;
    return p ? { deadline: new Date(this.deadline), parent: p } : { deadline: new Date(this.deadline) };
  }

  /** NATS has no deadline header: the remaining time as a relative timeout, like grpc-timeout. */
  natsTimeoutMs(): number {
    return Math.max(1, Math.floor(this.remainingMs()));
  }

  /** Throw DEADLINE_EXCEEDED or CANCELLED when the budget is spent. */
  throwIfExhausted(): void {
    for (const s of [...this.sources, ...(this.controller ? [this.controller.signal] : [])]) {
      if (s.aborted) throw s.reason instanceof CtxError ? s.reason : new CtxError(Code.CANCELLED, Reasons.CANCELLED, 'cancelled');
    }
    if (this.remainingMs() <= 0) throw new CtxError(Code.DEADLINE_EXCEEDED, Reasons.DEADLINE_EXCEEDED, 'deadline exceeded');
  }

  /** Release timers and listeners of a root budget. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const c of this.cleanups.splice(0)) c();
  }
}
