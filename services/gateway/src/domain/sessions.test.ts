import { envelopeOf } from '../mapping/envelope';
import { DomainError, RequestValidationError } from './errors';
import { MAX_BATCH_MESSAGES, sessionIdOf, validateBatchBody, validateMessageBody } from './sessions';

function issues(fn: () => unknown): Array<{ loc: Array<string | number>; message: string; type: string }> {
  try {
    fn();
  } catch (e) {
    if (e instanceof RequestValidationError) return envelopeOf(e).error.details.validation_errors;
    throw e;
  }
  throw new Error('expected a RequestValidationError');
}

describe('sessionIdOf', () => {
  it('accepts the plugins\' cc-<id> form', () => {
    expect(sessionIdOf('cc-3f2a9c1e-1b2c-4d5e-8f90-abcdef012345')).toBe('cc-3f2a9c1e-1b2c-4d5e-8f90-abcdef012345');
  });

  it.each(['..', 'a/b', 'a b', '', 'x'.repeat(257)])('rejects %p', (id) => {
    expect(() => sessionIdOf(id)).toThrow(DomainError);
  });
});

describe('validateMessageBody', () => {
  it('keeps role and content and ignores extra keys', () => {
    expect(validateMessageBody({ role: 'assistant', content: 'done', ts: 1 })).toEqual({ role: 'assistant', content: 'done' });
  });

  it.each<[string, unknown, Array<{ loc: Array<string | number>; type: string }>]>([
    ['no body', undefined, [{ loc: ['body'], type: 'missing' }]],
    ['a bad role', { role: 'system', content: 'x' }, [{ loc: ['body', 'role'], type: 'literal_error' }]],
    ['a missing content', { role: 'user' }, [{ loc: ['body', 'content'], type: 'missing' }]],
    ['a blank content', { role: 'user', content: '  ' }, [{ loc: ['body', 'content'], type: 'value_error' }]],
    ['a non-string content', { role: 'user', content: ['x'] }, [{ loc: ['body', 'content'], type: 'string_type' }]],
  ])('rejects %s', (_name, body, want) => {
    expect(issues(() => validateMessageBody(body))).toEqual(want.map((w) => expect.objectContaining(w)));
  });
});

describe('validateBatchBody', () => {
  it('keeps the messages in order', () => {
    expect(validateBatchBody({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] })).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ]);
  });

  it('reports every bad item at its index', () => {
    expect(issues(() => validateBatchBody({ messages: [{ role: 'user', content: 'ok' }, { role: 'bot', content: 'x' }, 'nope'] }))).toEqual([
      expect.objectContaining({ loc: ['body', 'messages', 1, 'role'], type: 'literal_error' }),
      expect.objectContaining({ loc: ['body', 'messages', 2], type: 'model_attributes_type' }),
    ]);
  });

  it('rejects an empty, missing or oversized list', () => {
    expect(issues(() => validateBatchBody({ messages: [] }))).toEqual([expect.objectContaining({ loc: ['body', 'messages'], type: 'too_short' })]);
    expect(issues(() => validateBatchBody({}))).toEqual([expect.objectContaining({ loc: ['body', 'messages'], type: 'missing' })]);
    const many = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, () => ({ role: 'user', content: 'x' }));
    expect(issues(() => validateBatchBody({ messages: many }))).toEqual([expect.objectContaining({ type: 'too_long' })]);
  });
});
