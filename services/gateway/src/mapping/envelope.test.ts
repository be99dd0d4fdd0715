import { common } from '@ctxmesh/proto';
import { DomainError, invalidArgument, RequestValidationError } from '../domain';
import { envelopeOf, errorEnvelope, successEnvelope, telemetryOf } from './envelope';

describe('successEnvelope', () => {
  it('adds telemetry only when present', () => {
    expect(successEnvelope({ a: 1 })).toEqual({ status: 'ok', result: { a: 1 } });
    expect(Object.keys(successEnvelope({ a: 1 }, null))).toEqual(['status', 'result']);
    const t = telemetryOf('r', 'search.find', 1.23456);
    expect(successEnvelope(1, t)).toEqual({ status: 'ok', result: 1, telemetry: { id: 'r', summary: { operation: 'search.find', duration_ms: 1.235 } } });
  });

  it('summarises orchestrator stages in telemetry', () => {
    const t = telemetryOf('r', 'search.search', 2, [
      { stage: 'gather', status: common.StageStatus.STAGE_STATUS_OK, durationMs: 1.5, reason: '' },
      { stage: 'rewrite', status: common.StageStatus.STAGE_STATUS_SKIPPED, durationMs: 0, reason: 'NOT_REQUESTED' },
    ]);
    expect(t.summary.stages).toEqual([
      { stage: 'gather', status: 'ok', duration_ms: 1.5 },
      { stage: 'rewrite', status: 'skipped', duration_ms: 0, reason: 'NOT_REQUESTED' },
    ]);
  });
});

describe('envelopeOf', () => {
  it('writes a validation error as envelope variant 1, every issue listed: status and error only (§1.7)', () => {
    const e = new RequestValidationError([
      { loc: ['body', 'tags', 0], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'unexpected'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    expect(envelopeOf(e)).toStrictEqual({
      status: 'error',
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'Invalid request parameters: body.tags.0: Input should be a valid string',
        details: {
          validation_errors: [
            { loc: ['body', 'tags', 0], message: 'Input should be a valid string', type: 'string_type' },
            { loc: ['body', 'unexpected'], message: 'Extra inputs are not permitted', type: 'extra_forbidden' },
          ],
        },
      },
    });
    expect(Object.keys(envelopeOf(e))).toEqual(['status', 'error']);
    // A domain error's envelope keeps every member, nulls included.
    expect(Object.keys(envelopeOf(new DomainError('NOT_FOUND', 'x')))).toEqual(['status', 'result', 'error', 'telemetry', 'profile']);
  });

  it('matches the §1.7 value-error example', () => {
    const e = new RequestValidationError([{ loc: ['body'], msg: "Value error, target_uri is not supported in mode='context'", type: 'value_error' }]);
    expect(envelopeOf(e).error.message).toBe("Invalid request parameters: body: Value error, target_uri is not supported in mode='context'");
  });

  it('dumps a domain error as envelope variant 2 with nulls kept', () => {
    expect(envelopeOf(invalidArgument('Search query or image_url must not be empty.'))).toEqual({
      status: 'error',
      result: null,
      error: { code: 'INVALID_ARGUMENT', message: 'Search query or image_url must not be empty.', details: {} },
      telemetry: null,
      profile: null,
    });
  });

  it('copies the details it is given', () => {
    const details = { reason: 'R' };
    const body = errorEnvelope('UNAVAILABLE', 'm', details);
    expect(body.error.details).toEqual(details);
    expect(body.error.details).not.toBe(details);
  });
});
