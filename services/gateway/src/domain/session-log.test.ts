import { DomainError, RequestValidationError } from './errors';
import { agentOfStatusSegment, COMPRESS_FIELDS, decompressPage, PROJECT_FIELDS, sessionLogBody, validateAppendEventsBody } from './session-log';
import { thrownBy } from '@ctxmesh/testing';

describe('sessionLogBody', () => {
  it.each([undefined, null, ''])('reads an absent body (%p) as {}', (raw) => {
    expect(sessionLogBody(raw, PROJECT_FIELDS)).toEqual({});
  });

  it('types nested models and reads seq edges in their tool forms', () => {
    const b = sessionLogBody(
      { request_id: 'r1', author: 'model', ranges: [{ start_seq: '295#call_1', end_seq: 300, summary: 's' }], route: { model: 'm' } },
      COMPRESS_FIELDS,
    );
    expect(b).toEqual({ request_id: 'r1', author: 'model', ranges: [{ start_seq: 295, end_seq: 300, summary: 's' }], route: { model: 'm' } });
  });

  it('names every bad field at its path, nested ones included', () => {
    const e = thrownBy(() => sessionLogBody({ request_id: 'r', author: 'bot', ranges: [{ start_seq: 'x', end_seq: 1 }] }, COMPRESS_FIELDS)) as RequestValidationError;
    expect(e.issues.map((i) => [i.loc.join('.'), i.type])).toEqual([
      ['body.author', 'literal_error'],
      ['body.ranges.0.start_seq', 'seq_parsing'],
      ['body.ranges.0.summary', 'missing'],
    ]);
  });
});

describe('validateAppendEventsBody', () => {
  it('keeps events that are objects, as they are', () => {
    expect(validateAppendEventsBody({ events: [{ type: 'message', x: 1 }], expected_head: -1 })).toEqual({ events: [{ type: 'message', x: 1 }], expected_head: -1 });
  });

  it('reports every event that is not an object', () => {
    const e = thrownBy(() => validateAppendEventsBody({ events: [{ type: 'm' }, 'x', [1]] })) as RequestValidationError;
    expect(e.issues).toEqual([
      { loc: ['body', 'events', 1], msg: 'Input should be a valid dictionary', type: 'dict_type' },
      { loc: ['body', 'events', 2], msg: 'Input should be a valid dictionary', type: 'dict_type' },
    ]);
  });
});

describe('agentOfStatusSegment', () => {
  it('reads the agent of "<aid>:status" and nothing else', () => {
    expect(agentOfStatusSegment('main:status')).toBe('main');
    expect(agentOfStatusSegment('main')).toBeNull();
    expect(agentOfStatusSegment(':status')).toBeNull();
  });

  it('refuses an agent id that breaks the id rule', () => {
    const e = thrownBy(() => agentOfStatusSegment('a b:status')) as DomainError;
    expect([e.code, e.message.startsWith("Invalid agent id 'a b': ")]).toEqual(['INVALID_ARGUMENT', true]);
  });
});

describe('decompressPage', () => {
  it.each<[Record<string, string | string[]>, { offset: number; limit: number }]>([
    [{}, { offset: 0, limit: 0 }],
    [{ offset: '20', limit: '5' }, { offset: 20, limit: 5 }],
    [{ limit: '0' }, { offset: 0, limit: 1 }],
    [{ limit: '-3' }, { offset: 0, limit: 1 }],
    [{ offset: 'abc', limit: '2.9' }, { offset: 0, limit: 2 }],
    [{ offset: ['1', '7'] }, { offset: 7, limit: 0 }],
    [{ offset: '1e300' }, { offset: Number.MAX_SAFE_INTEGER, limit: 0 }],
  ])('clamps %j to %j, never refusing', (query, page) => {
    expect(decompressPage(query)).toEqual(page);
  });
});
