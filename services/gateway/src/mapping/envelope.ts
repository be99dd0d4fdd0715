/**
 * The envelopes of every JSON answer (context-contract §1.6–§1.7), built here and nowhere
 * else: `{"status":"ok","result":…}` (with `telemetry` when asked for) and the two error
 * envelopes — variant 1 for a body that failed validation, variant 2 for every other error,
 * the mesh's included. Statuses are the error catalogue's (`domain/errors.ts`).
 */
import { common } from '@ctxmesh/proto';
import type { DomainError, RequestValidationError } from '../domain';

/** The `telemetry` member of a success envelope. */
export interface TelemetryJson {
  /** The request id. */
  id: string;
  summary: {
    /** e.g. `search.search`. */
    operation: string;
    /** Gateway wall time so far, ms. */
    duration_ms: number;
    /** Orchestrator stages (context mode), in run order. */
    stages?: Array<{ stage: string; status: string; duration_ms: number; reason?: string }>;
  };
}

/** A success envelope. */
export interface SuccessEnvelope<R> {
  status: 'ok';
  result: R;
  /** Only when the request asked for it (§1.6: no `null` members). */
  telemetry?: TelemetryJson;
}

/**
 * Variant 1 envelope: `{status:"error", error:{code, message, details:{validation_errors}}}` —
 * exactly these two members, no null ones (context-contract §1.7; a domain error's envelope
 * has its null members, a validation error's has none).
 */
export interface ValidationEnvelope {
  status: 'error';
  error: {
    code: 'INVALID_ARGUMENT';
    message: string;
    details: { validation_errors: Array<{ loc: Array<string | number>; message: string; type: string }> };
  };
}

/** Variant 2 envelope, dumped without dropping nulls. */
export interface DomainEnvelope {
  status: 'error';
  result: null;
  error: { code: string; message: string; details: Record<string, unknown> };
  telemetry: null;
  profile: null;
}

const STAGE_STATUS: Readonly<Record<number, string>> = {
  [common.StageStatus.STAGE_STATUS_OK]: 'ok',
  [common.StageStatus.STAGE_STATUS_SKIPPED]: 'skipped',
  [common.StageStatus.STAGE_STATUS_FAILED]: 'failed',
  [common.StageStatus.STAGE_STATUS_TIMEOUT]: 'timeout',
};

/** Build the `telemetry` member (requested with `telemetry: true` or `{"summary": true}`). */
export function telemetryOf(requestId: string, operation: string, durationMs: number, stages?: readonly common.StageResult[]): TelemetryJson {
  const t: TelemetryJson = { id: requestId, summary: { operation, duration_ms: Math.round(durationMs * 1000) / 1000 } };
  if (stages) {
    t.summary.stages = stages.map((s) => {
      const row: { stage: string; status: string; duration_ms: number; reason?: string } = {
        stage: s.stage,
        status: STAGE_STATUS[s.status] ?? 'unspecified',
        duration_ms: s.durationMs,
      };
      if (s.reason !== '') row.reason = s.reason;
      return row;
    });
  }
  return t;
}

/** `{"status":"ok","result":…}` plus `telemetry` only when given (§1.6: no `null` members). */
export function successEnvelope<R>(result: R, telemetry?: TelemetryJson | null): SuccessEnvelope<R> {
  return telemetry ? { status: 'ok', result, telemetry } : { status: 'ok', result };
}

/** A variant-2 envelope of `code`, `message` and `details` (copied). */
export function errorEnvelope(code: string, message: string, details: Record<string, unknown>): DomainEnvelope {
  return { status: 'error', result: null, error: { code, message, details: { ...details } }, telemetry: null, profile: null };
}

/**
 * The answer to an error of the catalogue: variant 1 for a {@link RequestValidationError}
 * (`message` = `"Invalid request parameters: " + loc + ": " + msg` of the first issue, and
 * every issue under `details.validation_errors`), variant 2 for a {@link DomainError}.
 */
export function envelopeOf(e: RequestValidationError): ValidationEnvelope;
export function envelopeOf(e: DomainError): DomainEnvelope;
export function envelopeOf(e: RequestValidationError | DomainError): ValidationEnvelope | DomainEnvelope;
export function envelopeOf(e: RequestValidationError | DomainError): ValidationEnvelope | DomainEnvelope {
  if (!('issues' in e)) return errorEnvelope(e.code, e.message, e.details);
  return {
    status: 'error',
    error: {
      code: e.code,
      message: e.message,
      details: { validation_errors: e.issues.map((i) => ({ loc: [...i.loc], message: i.msg, type: i.type })) },
    },
  };
}
