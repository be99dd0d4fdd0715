/**
 * What every handler needs: the settings and the provider clients (null = not configured).
 */
import { Code, isCode } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import type { ChatClient } from '../clients/chat';
import {
  ProviderAbortedError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnavailableError,
} from '@ctxmesh/provider';
import type { RerankClient } from '../clients/rerank';
import type { RewriteSettings } from '../config';

/** Dependencies of the handlers. */
export interface HandlerDeps {
  /** Settings (fuses, intent switch). */
  settings: RewriteSettings;
  /** Chat model client, or null when CTXMESH_LLM_URL is unset. */
  chat: ChatClient | null;
  /** Rerank client, or null when CTXMESH_RERANK_URL is unset. */
  reranker: RerankClient | null;
}

/** How a provider call that did not return ended. */
export interface CallFailure {
  /** `timeout` for the fuse or the call's deadline; `failed` for anything else. */
  status: 'timeout' | 'failed';
  /** UPPER_SNAKE reason: `TIMEOUT`, `DEADLINE_EXCEEDED`, `CANCELLED`, `HTTP_<status>`, `UNAVAILABLE`, `BAD_RESPONSE`, `INTERNAL`. */
  reason: string;
}

/**
 * Classify a provider call's error and log it (a warning: the request still answers, the
 * stage degrades). The error's details stay in the log; callers only get the status.
 */
export function failureOf(err: unknown, log: Logger, what: string): CallFailure {
  let f: CallFailure;
  if (err instanceof ProviderTimeoutError) f = { status: 'timeout', reason: 'TIMEOUT' };
  else if (err instanceof ProviderAbortedError) {
    // The budget's signal aborts with DEADLINE_EXCEEDED when the call's own deadline
    // passes: for the caller that is the same as the fuse expiring.
    f = isCode(err.reason, Code.DEADLINE_EXCEEDED) ? { status: 'timeout', reason: 'DEADLINE_EXCEEDED' } : { status: 'failed', reason: 'CANCELLED' };
  } else if (err instanceof ProviderHttpError) f = { status: 'failed', reason: `HTTP_${err.status}` };
  else if (err instanceof ProviderUnavailableError) f = { status: 'failed', reason: 'UNAVAILABLE' };
  else if (err instanceof ProviderResponseError) f = { status: 'failed', reason: 'BAD_RESPONSE' };
  else f = { status: 'failed', reason: 'INTERNAL' };
  if (f.reason === 'INTERNAL') log.error({ err }, `${what} failed`);
  else log.warn({ err, reason: f.reason, ...(err instanceof ProviderHttpError ? { body: err.body } : {}) }, `${what} ${f.status === 'timeout' ? 'timed out' : 'failed'}`);
  return f;
}
