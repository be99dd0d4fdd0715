import { InvalidFieldError } from './errors';
import { parseHarnessEventJson, validateHarnessEvent } from './events';

function fieldOf(fn: () => unknown): { field: string; reason: string; code: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidFieldError) return { field: e.field, reason: e.reason, code: e.code };
    throw e;
  }
  throw new Error('expected an InvalidFieldError');
}

const text = (t: string) => ({ type: 'text', text: t });

describe('validateHarnessEvent', () => {
  it.each(['compaction/start', 'compaction/summary', 'compaction/end', 'compaction/prune'])('rejects the engine-owned type %s', (type) => {
    expect(fieldOf(() => validateHarnessEvent({ type, compactionId: 'x' }, 'events[2]'))).toEqual({
      field: 'events[2].type',
      reason: 'ENGINE_OWNED_EVENT',
      code: 'INVALID_ARGUMENT',
    });
  });

  it('rejects a surfaceOp and sourceEventSeqs as engine-owned', () => {
    const base = { type: 'user/message', content: [text('hi')] };
    expect(fieldOf(() => validateHarnessEvent({ ...base, surfaceOp: { op: 'replace', startSeq: 1, endSeq: 2 } }, 'events[0]'))).toMatchObject({
      field: 'events[0].surfaceOp',
      reason: 'ENGINE_OWNED_EVENT',
    });
    expect(fieldOf(() => validateHarnessEvent({ ...base, sourceEventSeqs: [1] }, 'events[0]'))).toMatchObject({
      field: 'events[0].sourceEventSeqs',
      reason: 'ENGINE_OWNED_EVENT',
    });
  });

  it.each([{ kind: 'compact-checkpoint', compactionId: 'c' }, { kind: 'plugin', plugin: 'compact' }, { kind: 'ctxmesh-prune', pruneId: 'p' }])(
    'rejects the engine-owned source %j',
    (source) => {
      expect(fieldOf(() => validateHarnessEvent({ type: 'user/message', content: [text('x')], source }, 'events[1]'))).toMatchObject({
        field: 'events[1].source.kind',
        reason: 'ENGINE_OWNED_EVENT',
      });
    },
  );

  it('names the missing call id of a tool result', () => {
    expect(fieldOf(() => validateHarnessEvent({ type: 'tool/result', content: [text('out')] }, 'events[3]'))).toMatchObject({
      field: 'events[3].callId',
      reason: 'MALFORMED_EVENT',
    });
  });

  it('names an unknown type and a missing type', () => {
    expect(fieldOf(() => validateHarnessEvent({ type: 'request/context' }, 'events[0]')).field).toBe('events[0].type');
    expect(fieldOf(() => validateHarnessEvent({ content: [] }, 'events[0]')).field).toBe('events[0].type');
    expect(fieldOf(() => validateHarnessEvent('user/message', 'events[0]')).field).toBe('events[0]');
  });

  it('rejects an empty message with no blocks, naming content', () => {
    for (const type of ['user/message', 'assistant/message', 'system/message']) {
      expect(fieldOf(() => validateHarnessEvent({ type, content: [] }, 'events[4]')).field).toBe('events[4].content');
    }
    expect(fieldOf(() => validateHarnessEvent({ type: 'user/message' }, 'events[4]')).field).toBe('events[4].content');
  });

  it('names malformed blocks', () => {
    const v = (content: unknown[], type = 'user/message') => fieldOf(() => validateHarnessEvent({ type, content }, 'events[0]')).field;
    expect(v([{ type: 'video' }])).toBe('events[0].content[0].type');
    expect(v([text('a'), { type: 'text' }])).toBe('events[0].content[1].text');
    expect(v([{ type: 'image' }])).toBe('events[0].content[0].mimeType');
    expect(v([{ type: 'image', mimeType: 'image/png', width: -1 }])).toBe('events[0].content[0].width');
    expect(v([{ type: 'file' }])).toBe('events[0].content[0].name');
    expect(v([{ type: 'tool-call', callId: 'c', name: 'n' }])).toBe('events[0].content[0].type');
    expect(v([{ type: 'tool-call', name: 'n' }], 'assistant/message')).toBe('events[0].content[0].callId');
    expect(v([{ type: 'tool-call', callId: 'c' }], 'assistant/message')).toBe('events[0].content[0].name');
    expect(
      v(
        [
          { type: 'tool-call', callId: 'c', name: 'n' },
          { type: 'tool-call', callId: 'c', name: 'm' },
        ],
        'assistant/message',
      ),
    ).toBe('events[0].content[1].callId');
  });

  it('names a malformed source and turn', () => {
    expect(fieldOf(() => validateHarnessEvent({ type: 'user/message', content: [text('x')], source: { kind: '' } }, 'e')).field).toBe('e.source.kind');
    expect(
      fieldOf(() => validateHarnessEvent({ type: 'user/message', content: [text('x')], source: { kind: 'agent-instructions', changes: [{}] } }, 'e')).field,
    ).toBe('e.source.changes[0].scope');
    expect(fieldOf(() => validateHarnessEvent({ type: 'system/message', content: [text('x')], source: { kind: 'user' } }, 'e')).field).toBe('e.source');
    expect(fieldOf(() => validateHarnessEvent({ type: 'turn/start', turn: 1.5 }, 'e')).field).toBe('e.turn');
  });

  it('accepts well-formed events and keeps extra fields', () => {
    const e = {
      type: 'assistant/message',
      content: [text('hi'), { type: 'tool-call', callId: 'c1', name: 'grep', args: { q: 'x' } }, { type: 'image', mimeType: 'image/png', name: 'a.png' }],
      ts: 123,
    };
    expect(validateHarnessEvent(e, 'e')).toBe(e);
    expect(validateHarnessEvent({ type: 'tool/result', callId: 'c1', content: [text('')], isError: true }, 'e').type).toBe('tool/result');
    expect(validateHarnessEvent({ type: 'turn/start', turn: 3 }, 'e').type).toBe('turn/start');
    expect(validateHarnessEvent({ type: 'user/message', content: [text('x')], source: { kind: 'runtime-context' } }, 'e').type).toBe('user/message');
  });
});

describe('parseHarnessEventJson', () => {
  it('names the json field of text that is not JSON', () => {
    expect(fieldOf(() => parseHarnessEventJson('{nope', 'events[1]')).field).toBe('events[1].json');
    expect(parseHarnessEventJson('{"type":"turn/end"}', 'events[1]')).toEqual({ type: 'turn/end' });
  });
});
