/**
 * Per-request state of the gateway: when the request started, who is calling, and its
 * Budget (STYLE B5): `X-Request-Timeout-Ms` clamped to the configured maximum, the default
 * when absent, cancelled when the client disconnects.
 */
import { Budget, Code, CtxError } from '@ctxmesh/rpc';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DeadlineConfig } from '../config';
import { DomainError, type Caller, type Identity } from '../domain';

/** Header carrying the caller's timeout, in ms (relative, like grpc-timeout). */
export const TIMEOUT_HEADER = 'x-request-timeout-ms';

/** State attached to every request. */
export interface RequestState {
  /** `process.hrtime.bigint()` at `onRequest`. */
  startedAt: bigint;
  /** Aborted when the client goes away before the response is written. */
  disconnect: AbortController;
  /** Set by the `/api` auth hook. */
  caller: Caller | null;
  /** Created on first use by {@link budgetOf}. */
  budget: Budget | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Gateway request state (see `http/context.ts`). */
    gw: RequestState;
  }
}

/** Initialise the state of a request (an `onRequest` hook). */
export function initRequestState(request: FastifyRequest, reply: FastifyReply): void {
  const disconnect = new AbortController();
  request.gw = { startedAt: process.hrtime.bigint(), disconnect, caller: null, budget: null };
  // 'close' before the response ended means the client went away: cancel downstream work.
  // (The request's own 'close' also fires after a normal body read, so it cannot tell.)
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) disconnect.abort(new CtxError(Code.CANCELLED, 'CANCELLED', 'the client disconnected'));
  });
}

/** Milliseconds since the request arrived. */
export function elapsedMs(request: FastifyRequest): number {
  // A request Fastify rejects before routing (a malformed URL) never ran onRequest.
  if (!request.gw) return 0;
  return Number(process.hrtime.bigint() - request.gw.startedAt) / 1e6;
}

/**
 * Check `X-Request-Timeout-Ms`: absent or blank is the default budget; otherwise it must be a
 * whole number of milliseconds. Without this check a typo (`5s`, `1e3`) silently ran the
 * request on the default budget.
 * @throws DomainError 400 INVALID_ARGUMENT naming the header, details `{header, value}`
 */
export function checkTimeoutHeader(raw: string | string[] | undefined): void {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '' || /^\d+$/.test(value.trim())) return;
  throw new DomainError('INVALID_ARGUMENT', `X-Request-Timeout-Ms must be a whole number of milliseconds, got '${value.slice(0, 64)}'`, {
    header: 'X-Request-Timeout-Ms',
    value: value.slice(0, 64),
  });
}

/** The request's Budget, created on first use from `X-Request-Timeout-Ms`. */
export function budgetOf(request: FastifyRequest, deadlines: DeadlineConfig): Budget {
  if (!request.gw.budget) {
    const raw = request.headers[TIMEOUT_HEADER];
    request.gw.budget = Budget.fromTimeoutHeader(Array.isArray(raw) ? raw[0] : raw, {
      defaultMs: deadlines.defaultMs,
      maxMs: deadlines.maxMs,
      signals: [request.gw.disconnect.signal],
    });
  }
  return request.gw.budget;
}

/** Release the budget's timer and listeners (an `onResponse` hook). */
export function disposeRequestState(request: FastifyRequest): void {
  request.gw?.budget?.dispose();
}

/**
 * The authenticated caller.
 * @throws Error when called on a route without the auth hook (a programming error)
 */
export function callerOf(request: FastifyRequest): Caller {
  const c = request.gw.caller;
  if (!c) throw new Error(`no caller on ${request.method} ${request.url}: the route is outside /api`);
  return c;
}

/** The caller's identity as the domain functions take it. */
export function identityOf(request: FastifyRequest): Identity {
  return callerOf(request);
}
