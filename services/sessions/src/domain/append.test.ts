import { PRUNE_STUB_TEXT } from './events';
import { assistant, assistantCalls, call, conversation, KEY, newLog, parsedLog, rawLog, result, system, user } from './__tests__/fixtures';

describe('SessionLog.appendEvents', () => {
  it('creates the session on the first append and assigns seqs', async () => {
    const { log, store } = newLog();
    const res = await log.appendEvents(KEY, { expectedHead: -1, events: [system('s'), user('hi'), { type: 'turn/start', turn: 1 }] });
    expect(res).toEqual({ seqs: [0, 1, 2], head: 2, generation: 0, prunes: [] });
    expect(await rawLog(store)).toEqual([JSON.stringify(system('s')), JSON.stringify(user('hi')), '{"type":"turn/start","turn":1}']);
    expect(await store.readSurface(KEY)).toEqual([0, 1]);
    expect((await store.snapshot(KEY, -1))?.meta.estimatorId).toBe('ctxmesh-claim-v1');
  });

  it('refuses a stale expectedHead with ABORTED and writes nothing', async () => {
    const { log, store } = newLog();
    await log.appendEvents(KEY, { events: [user('a')] });
    await expect(log.appendEvents(KEY, { expectedHead: -1, events: [user('b')] })).rejects.toMatchObject({
      name: 'ConflictError',
      code: 'ABORTED',
      reason: 'STALE_EXPECTED_HEAD',
      head: 0,
      generation: 0,
    });
    expect(await rawLog(store)).toHaveLength(1);
    expect((await log.appendEvents(KEY, { expectedHead: 0, events: [user('b')] })).seqs).toEqual([1]);
  });

  it('rejects engine-owned and malformed events as a whole, naming the field', async () => {
    const { log, store } = newLog();
    await expect(log.appendEvents(KEY, { events: [user('ok'), { type: 'compaction/summary', summary: 'x' }] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'ENGINE_OWNED_EVENT',
      field: 'events[1].type',
    });
    await expect(log.appendEvents(KEY, { events: [{ type: 'tool/result', content: [{ type: 'text', text: 'x' }] }] })).rejects.toMatchObject({
      field: 'events[0].callId',
    });
    await expect(log.appendEvents(KEY, { events: [] })).rejects.toMatchObject({ field: 'events' });
    await expect(log.appendEvents(KEY, { events: [user('x')], expectedHead: 1.5 })).rejects.toMatchObject({ field: 'expectedHead' });
    await expect(log.appendEvents({ ...KEY, sessionId: '' }, { events: [user('x')] })).rejects.toMatchObject({ field: 'sessionId' });
    expect(await store.snapshot(KEY, -1)).toBeNull();
  });

  it('pairs parallel tool results arriving in separate appends', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: [user('q'), assistantCalls('', call('a'), call('b'))] });
    await log.appendEvents(KEY, { events: [result('b', 'rb')] });
    const res = await log.appendEvents(KEY, { events: [result('a', 'ra'), assistant('done')] });
    expect(res.prunes).toEqual([]);
    expect(res.generation).toBe(0);
    const { messages } = await log.projectSurface(KEY);
    expect(messages.map((m) => m.id)).toEqual(['0', '1#a', '1#b', '2', '3', '4']);
    expect(messages.find((m) => m.id === '2')).toMatchObject({ role: 'tool', toolCallId: 'b', toolName: 'read_file' });
  });

  it('prunes an unanswered call when the conversation moves on, keeping it reachable', async () => {
    const { log, store } = newLog();
    await log.appendEvents(KEY, { events: [user('q'), assistantCalls('trying', call('a'), call('b')), result('a', 'result of a uidA1u')] });
    const res = await log.appendEvents(KEY, { events: [user('never mind')] });
    expect(res.prunes).toEqual([{ pruneId: expect.any(String), reason: 'unanswered-tool-call', shadowedSeqs: [1, 2], stubSeq: 4 }]);
    expect(res.seqs).toEqual([5]);
    expect(res.generation).toBe(1);
    const events = await parsedLog(store);
    expect(events.slice(3).map((e) => e.type)).toEqual(['compaction/prune', 'user/message', 'user/message']);
    const { messages } = await log.projectSurface(KEY);
    expect(messages.map((m) => [m.seq, m.class, m.text])).toEqual([
      [0, 'real', 'q'],
      [4, 'metadata', PRUNE_STUB_TEXT],
      [5, 'real', 'never mind'],
    ]);
    expect(await store.readSurface(KEY)).toEqual([0, 4, 5]);
    const page = await log.decompress(KEY, { ref: res.prunes[0]!.pruneId });
    expect(page.items.map((i) => i.seq)).toEqual([1, 2]);
    expect((await log.searchContext(KEY, { query: 'uidA1u' })).hits[0]).toMatchObject({ kind: 'message', seq: 2, blockId: res.prunes[0]!.pruneId });
    const { claims } = await log.getStatus(KEY);
    expect(claims.projected).toBeGreaterThan(0);
  });

  it('prunes a tool result that answers no pending call at once', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: [user('q'), assistant('a')] });
    const res = await log.appendEvents(KEY, { events: [result('ghost', 'late output'), user('next')] });
    expect(res.prunes.map((p) => [p.reason, p.shadowedSeqs])).toEqual([['orphan-tool-result', [2]]]);
    expect(res.seqs).toEqual([2, 5]);
    const { messages } = await log.projectSurface(KEY);
    expect(messages.some((m) => m.role === 'tool')).toBe(false);
  });

  it('resets the appending agent budget on an assistant message only', async () => {
    const { log, store } = newLog();
    await log.appendEvents(KEY, { events: conversation(8) });
    await log.recoverOverflow(KEY, { requestId: 'r', agentId: 'ag', failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } });
    await log.appendEvents(KEY, { agentId: 'ag', events: [user('a user message does not count')] });
    expect(await store.readBudget(KEY, 'ag')).toMatchObject({ used: 1 });
    await log.appendEvents(KEY, { agentId: 'ag', events: [assistant('progress')] });
    expect(await store.readBudget(KEY, 'ag')).toBeNull();
  });

  it('retries a racing append on a fresh snapshot', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: [user('start')] });
    const results = await Promise.all([1, 2, 3].map((i) => log.appendEvents(KEY, { events: [user(`m${i}`)] })));
    expect(results.map((r) => r.seqs[0]).sort()).toEqual([1, 2, 3]);
  });
});
