import type { LogEvent } from './events';
import { computeCompressibleRanges, computeGuards, guardReasonsAt, guardViolations, isGuardedAt, rankForOverflow, resolveSpan, spanGuarded } from './ranges';
import { planOverflowCompaction } from './recovery';
import { assistant, assistantCalls, call, conversation, instructions, KEY, newLog, parsedLog, result, system, user } from './__tests__/fixtures';

function viewOf(events: unknown[]) {
  return newLog().log.viewOf(events as LogEvent[]);
}

const rows = (events: unknown[], preserveRecent?: number) => computeCompressibleRanges(viewOf(events), preserveRecent).map((r) => [r.row.start, r.row.end]);

describe('computeCompressibleRanges', () => {
  it('cuts runs at the system node, instructions, the last user turn and the protected tail', () => {
    const events = [
      system('s'), // 0 barrier
      user('u1'),
      assistant('a1'),
      instructions('repo', 'v1'), // 3 barrier (stale copy, still a barrier in the table)
      user('u2'),
      assistant('a2'),
      instructions('repo', 'v2'), // 6 barrier (current)
      user('u3'),
      assistant('a3'),
      user('u4 (last real turn)'), // 9 barrier
      assistant('a4'),
      assistant('a5'),
      assistant('t1'),
      assistant('t2'),
      assistant('t3'),
      assistant('t4'),
      assistant('t5'),
    ];
    expect(rows(events)).toEqual([
      [1, 2],
      [4, 5],
      [7, 8],
      [10, 11],
    ]);
  });

  it('protects no tail with preserveRecent 0 (never everything)', () => {
    const events = [system('s'), user('u1'), assistant('a1'), assistant('a2'), assistant('a3')];
    expect(rows(events, 0)).toEqual([[2, 4]]);
    expect(rows(events, 5)).toEqual([]);
    expect(rows(events, 2)).toEqual([[2, 2]]);
  });

  it('treats unknown injected sources as barriers but folds metadata and content channels', () => {
    const events = [
      system('s'),
      user('u0'),
      user('skills', { kind: 'skill-catalog' }),
      user('a', { kind: 'ctxmesh-nudge' }),
      user('b', { kind: 'runtime-context' }),
      assistant('c'),
      user('u-last'),
      assistant('1'),
      assistant('2'),
      assistant('3'),
      assistant('4'),
      assistant('5'),
    ];
    expect(rows(events)).toEqual([
      [1, 1],
      [3, 5],
    ]);
  });

  it('never offers the lone tool call whose result sits in the protected tail (edge case 3)', () => {
    const events = [
      system('s'),
      user('old'),
      assistant('old answer'),
      user('the last real user turn'), // 3: barrier
      assistantCalls('', call('c')), // 4: a run of one node
      result('c', 'r'), // 5: first node of the protected tail
      assistant('t1'),
      assistant('t2'),
      assistant('t3'),
      assistant('t4'),
    ];
    const view = viewOf(events);
    // The shrink pass collapses [4..4]; the expand pass widens it to [4..5] which reaches into
    // the tail: only the final-slice guard check stops it.
    expect(resolveSpan(view, { startPos: 4, endPos: 4 }, true)).toEqual({ startPos: 4, endPos: 5 });
    expect(guardViolations(view, computeGuards(view, 5), { startPos: 4, endPos: 5 }, 'table')).toEqual([{ seq: 5, reasons: ['recent'] }]);
    expect(rows(events)).toEqual([[1, 2]]);
    const plan = planOverflowCompaction(view, { compactionId: 'x', provider: '', model: '', now: 0 });
    expect(plan?.shadowedSeqs).toEqual([1, 2]);
  });

  it('shrinks edges to balanced, anchorable nodes', () => {
    const view = viewOf([
      system('s'),
      user('q'),
      assistantCalls('', call('a'), call('b')), // 2
      result('a', 'ra'), // 3
      result('b', 'rb'), // 4
      user(' '), // 5: blank text is not anchorable
      assistant('x'), // 6
      ...Array.from({ length: 5 }, (_, i) => assistant(`t${i}`)),
    ]);
    expect(resolveSpan(view, { startPos: 3, endPos: 6 }, false)).toEqual({ startPos: 6, endPos: 6 });
    expect(resolveSpan(view, { startPos: 1, endPos: 3 }, false)).toEqual({ startPos: 1, endPos: 1 });
    expect(resolveSpan(view, { startPos: 3, endPos: 3 }, true)).toEqual({ startPos: 2, endPos: 4 });
    expect(resolveSpan(view, { startPos: 3, endPos: 3 }, false)).toBeNull();
  });

  it('prices ranges with the rank estimator, media and tool share', () => {
    const view = viewOf([
      system('s'),
      { type: 'user/message', content: [{ type: 'text', text: '上下文' }, { type: 'image', mimeType: 'image/png', name: 'a.png' }] },
      assistantCalls('', call('c', 'grep', {})),
      result('c', 'abcd'),
      { type: 'user/message', content: [{ type: 'text', text: 'f' }, { type: 'file', name: 'n.txt', sizeBytes: 10 }] },
      ...Array.from({ length: 5 }, (_, i) => assistant(`t${i}`)),
    ]);
    const [r] = computeCompressibleRanges(view);
    expect(r!.row).toMatchObject({ start: 1, end: 3, count: 3, images: 1, files: 0, toolPct: 67 });
    const img = { type: 'image', mimeType: 'image/png', name: 'a.png' };
    const imageText = '上下文\n[image image/png a.png]';
    const expected =
      3 + Math.ceil((imageText.length - 3) / 4) + (4 + Math.ceil(JSON.stringify(img).length / 4)) + Math.ceil('[tool-call grep {}]'.length / 4) + 1;
    expect(r!.row.rankTokens).toBe(expected);
  });

  it('orders overflow candidates by rank tokens, oldest first on ties', () => {
    const mk = (start: number, rank: number) => ({ span: { startPos: start, endPos: start }, row: { start, end: start, count: 1, rankTokens: rank, toolPct: 0, images: 0, files: 0 } });
    expect(rankForOverflow([mk(1, 5), mk(3, 9), mk(5, 9), mk(7, 2)]).map((c) => c.row.start)).toEqual([3, 5, 1, 7]);
  });
});

describe('isGuardedAt and spanGuarded', () => {
  it('agree with guardReasonsAt and guardViolations at every position, both policies, with checkpoints, instructions and the system node', async () => {
    const { log, store } = newLog();
    await log.appendEvents(KEY, { events: [system('s'), ...conversation(8), instructions('repo', 'v1'), ...conversation(4), instructions('repo', 'v2'), user('last')] as never });
    const r = (await log.listCompressibleRanges(KEY)).ranges[0]!;
    await log.compress(KEY, { requestId: 'c', author: 'model', expectedGeneration: 0, ranges: [{ startSeq: r.start, endSeq: r.start + 4, summary: 'part' }] });
    const view = log.viewOf((await parsedLog(store)) as unknown as LogEvent[]);
    let guarded = 0;
    for (const keep of [0, 5]) {
      const guards = computeGuards(view, keep);
      for (const [policy, allow] of [['table', false], ['compress', false], ['compress', true]] as const) {
        for (let p = 0; p < view.surface.length; p++) {
          const want = guardReasonsAt(view, guards, p, policy, allow).length > 0;
          expect([p, policy, allow, isGuardedAt(view, guards, p, policy, allow)]).toEqual([p, policy, allow, want]);
          if (want) guarded++;
          const span = { startPos: Math.max(0, p - 2), endPos: p };
          expect(spanGuarded(view, guards, span, policy, allow)).toBe(guardViolations(view, guards, span, policy, allow).length > 0);
        }
      }
    }
    expect(guarded).toBeGreaterThan(10);
  });
});
