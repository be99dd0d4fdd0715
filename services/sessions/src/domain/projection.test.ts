import { classifySource, isAnchorable, isRealUserTurn } from './classify';
import { CorruptLogError } from './errors';
import type { LogEvent } from './events';
import { SUMMARY_FRAME_PREFIX } from './text';
import { assistant, assistantCalls, call, newLog, result, system, user } from './__tests__/fixtures';

const viewOf = (events: unknown[]) => newLog().log.viewOf(events as LogEvent[]);

describe('classifySource', () => {
  it.each([
    [undefined, 'real'],
    [{ kind: 'user' }, 'real'],
    [{ kind: 'runtime-context' }, 'real'],
    [{ kind: 'subagent-relay' }, 'real'],
    [{ kind: 'compact-checkpoint', compactionId: 'c' }, 'checkpoint'],
    [{ kind: 'plugin', plugin: 'compact', compactionId: 'c' }, 'checkpoint'],
    [{ kind: 'ctxmesh-prune', pruneId: 'p' }, 'metadata'],
    [{ kind: 'ctxmesh-nudge' }, 'metadata'],
    [{ kind: 'agent-instructions', changes: [{ scope: 'a' }] }, 'instruction'],
    [{ kind: 'skill-catalog' }, 'instruction'],
    [{ kind: 'plugin', plugin: 'someone-else' }, 'instruction'],
    [{ kind: 'never-heard-of-it' }, 'instruction'],
  ])('classes %j as %s', (source, cls) => {
    expect(classifySource(source)).toBe(cls);
  });

  it('counts only user-typed messages as real user turns', () => {
    expect(isRealUserTurn({ type: 'user/message', content: [{ type: 'text', text: 'x' }] })).toBe(true);
    expect(isRealUserTurn({ type: 'user/message', content: [{ type: 'text', text: 'x' }], source: { kind: 'runtime-context' } })).toBe(false);
    expect(isRealUserTurn({ type: 'assistant/message', content: [{ type: 'text', text: 'x' }] })).toBe(false);
  });

  it('anchors edges on text, calls and results, never on the system node', () => {
    expect(isAnchorable({ type: 'system/message', content: [{ type: 'text', text: 'x' }] })).toBe(false);
    expect(isAnchorable({ type: 'user/message', content: [{ type: 'image', mimeType: 'image/png' }] })).toBe(false);
    expect(isAnchorable({ type: 'assistant/message', content: [{ type: 'tool-call', callId: 'c', name: 'n' }] })).toBe(true);
    expect(isAnchorable({ type: 'tool/result', callId: 'c', content: [{ type: 'text', text: '' }] })).toBe(true);
  });
});

describe('buildView', () => {
  const legacyLog = [
    system('s'),
    user('q'),
    assistant('a'),
    { type: 'compaction/start', compactionId: 'old', turn: null },
    {
      type: 'compaction/summary',
      compactionId: 'old',
      summary: 'an unframed summary from an older writer',
      topic: '',
      author: 'model',
      tier: 1,
      parentBlockIds: [],
      shadowedRange: { start: 1, end: 2 },
      shadowedSeqs: [1, 2],
      shadowedTokenCount: 12,
      estimatorId: 'legacy',
      provider: '',
      model: '',
      verifiedReadings: [],
      createdAt: 0,
    },
    {
      type: 'user/message',
      source: { kind: 'plugin', plugin: 'compact', compactionId: 'old' },
      content: [{ type: 'text', text: 'an unframed summary from an older writer' }],
      surfaceOp: { op: 'replace', startSeq: 1, endSeq: 2 },
      sourceEventSeqs: [1, 2],
    },
    { type: 'compaction/end', compactionId: 'old', turn: null },
    { type: 'compaction/start', compactionId: 'crashed', turn: null },
    user('later'),
  ];

  it('frames a legacy checkpoint at projection time and splices positionally', () => {
    const view = viewOf(legacyLog);
    expect(view.surface).toEqual([0, 5, 8]);
    expect(view.generation).toBe(1);
    expect(view.blocks[0]).toMatchObject({ blockId: 'old', kernelRef: 'b1', summarySeq: 5, active: true });
    const node = view.messages().find((m) => m.seq === 5)!;
    expect(node).toMatchObject({ class: 'checkpoint', text: `${SUMMARY_FRAME_PREFIX}\nan unframed summary from an older writer` });
  });

  it('reports a dangling compaction start without letting it block anything', () => {
    const view = viewOf(legacyLog);
    expect(view.danglingCompactions).toEqual(['crashed']);
  });

  it('refuses a replace that does not match the surface as a corrupt log', () => {
    const bad = [user('a'), { type: 'user/message', content: [{ type: 'text', text: 'x' }], surfaceOp: { op: 'replace', startSeq: 0, endSeq: 7 }, sourceEventSeqs: [0] }];
    expect(() => viewOf(bad)).toThrow(CorruptLogError);
  });

  it('splits assistant calls into one message each and names results from their call', () => {
    const view = viewOf([user('q'), assistantCalls('thinking', call('a', 'grep', { q: 1 }), call('b', 'ls')), result('a', 'ra'), result('b', 'rb')]);
    expect(view.messages()).toEqual([
      { seq: 0, id: '0', role: 'user', class: 'real', text: 'q' },
      { seq: 1, id: '1#a', role: 'assistant', class: 'real', text: 'thinking', toolCallId: 'a', toolName: 'grep', toolArgs: '{"q":1}' },
      { seq: 1, id: '1#b', role: 'assistant', class: 'real', text: '', toolCallId: 'b', toolName: 'ls', toolArgs: '{"path":"/src/b.ts"}' },
      { seq: 2, id: '2', role: 'tool', class: 'real', text: 'ra', toolCallId: 'a', toolName: 'grep' },
      { seq: 3, id: '3', role: 'tool', class: 'real', text: 'rb', toolCallId: 'b', toolName: 'ls' },
    ]);
    const { cutOk, groupEnd } = view.pairing();
    expect(Array.from(cutOk)).toEqual([1, 1, 0, 0, 1]);
    expect(groupEnd[1]).toBe(3);
  });
});
