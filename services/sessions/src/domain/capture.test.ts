import { CONTEXT_WINDOW_EXCEEDED } from './recovery';
import { SUMMARY_FRAME_PREFIX } from './text';
import { assistant, assistantCalls, call, conversation, instructions, KEY, newLog, parsedLog, result, system, user } from './__tests__/fixtures';

describe('SessionLog.appendMessages', () => {
  it('turns captured pairs into user and assistant message events and creates the session', async () => {
    const { log, store } = newLog();
    const res = await log.appendMessages(KEY, { messages: [{ role: 'user', content: 'deploy x?' }, { role: 'assistant', content: 'deployed.' }] });
    expect(res).toEqual({ seqs: [0, 1], messageCount: 2, head: 1, generation: 0 });
    expect(await parsedLog(store)).toEqual([
      { type: 'user/message', content: [{ type: 'text', text: 'deploy x?' }] },
      { type: 'assistant/message', content: [{ type: 'text', text: 'deployed.' }] },
    ]);
    const again = await log.appendMessages(KEY, { messages: [{ role: 'user', content: 'and y?' }] });
    expect(again).toEqual({ seqs: [2], messageCount: 3, head: 2, generation: 0 });
  });

  it('names the bad field and writes nothing', async () => {
    const { log, store } = newLog();
    await expect(log.appendMessages(KEY, { messages: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field: 'messages' });
    await expect(log.appendMessages(KEY, { messages: [{ role: 'user', content: 'ok' }, { role: 'tool', content: 'x' }] })).rejects.toMatchObject({
      field: 'messages[1].role',
    });
    await expect(log.appendMessages(KEY, { messages: [{ role: 'assistant', content: '  ' }] })).rejects.toMatchObject({ field: 'messages[0].content' });
    expect(await store.snapshot(KEY, -1)).toBeNull();
  });

  it('counts harness messages but not the engine-written checkpoints and prune stubs', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: conversation(8) });
    const before = await log.appendMessages(KEY, { messages: [{ role: 'user', content: 'next' }] });
    // 1 system + 8 × (user, assistant call, result, answer): 8 users + 16 assistant + 1 new user.
    expect(before.messageCount).toBe(25);
    const rec = await log.recoverOverflow(KEY, { requestId: 'r1', agentId: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    expect(rec.action).toBe('retry');
    const after = await log.appendMessages(KEY, { messages: [{ role: 'assistant', content: 'done' }] });
    expect(after.messageCount).toBe(26);
  });
});

describe('SessionLog.getSearchContext', () => {
  it('reports an unknown session without creating it', async () => {
    const { log, store } = newLog();
    expect(await log.getSearchContext(KEY, { limit: 5 })).toEqual({ exists: false, created: false, messages: [], archiveOverview: '' });
    expect(await store.snapshot(KEY, -1)).toBeNull();
  });

  it('materialises a missing session when asked, once', async () => {
    const { log, store } = newLog();
    expect(await log.getSearchContext(KEY, { create: true })).toEqual({ exists: true, created: true, messages: [], archiveOverview: '' });
    expect((await store.snapshot(KEY, -1))?.meta.head).toBe(-1);
    expect(await log.getSearchContext(KEY, { create: true })).toEqual({ exists: true, created: false, messages: [], archiveOverview: '' });
    // The empty session takes appends like any other.
    expect((await log.appendMessages(KEY, { messages: [{ role: 'user', content: 'hello' }] })).seqs).toEqual([0]);
  });

  it('returns only one creation among concurrent creators', async () => {
    const { log } = newLog();
    const res = await Promise.all([1, 2, 3].map(() => log.getSearchContext(KEY, { create: true })));
    expect(res.filter((r) => r.created)).toHaveLength(1);
    expect(res.every((r) => r.exists)).toBe(true);
  });

  it('returns the latest real user and assistant messages, oldest first, skipping injected rows and bare calls', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, {
      events: [
        system('You are a coding agent.'),
        instructions('repo', 'AGENTS.md: be terse'),
        user('first question'),
        assistantCalls('', call('c1')),
        result('c1', 'file body'),
        assistant('first answer'),
        user('runtime snapshot', { kind: 'runtime-context' }),
        user('second question'),
        assistant('second answer'),
      ],
    });
    const all = await log.getSearchContext(KEY, {});
    expect(all.messages).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
    ]);
    expect((await log.getSearchContext(KEY, { limit: 2 })).messages).toEqual([
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
    ]);
  });

  it('defaults to 20 messages and still reads originals hidden by a compaction', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: conversation(15, 10) });
    const res = await log.getSearchContext(KEY, { limit: 0 });
    expect(res.messages).toHaveLength(20);
    const rec = await log.recoverOverflow(KEY, { requestId: 'r1', agentId: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    expect(rec.block!.hiddenCount).toBeGreaterThan(0);
    const all = await log.getSearchContext(KEY, { limit: 100 });
    // 15 questions + 15 "looking" texts + 15 answers, the hidden ones included.
    expect(all.messages).toHaveLength(45);
    expect((await log.projectSurface(KEY)).messages.filter((m) => m.class === 'real' && m.role !== 'tool').length).toBeLessThan(45);
    expect(all.messages[0]!.content).toMatch(/^question uid1u/);
    // An engine marker is not an overview.
    expect(all.archiveOverview).toBe('');
  });

  it('uses the newest active model-written summary as the archive overview', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: conversation(8) });
    await log.compress(KEY, { requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 4, summary: 'Asked about file c0.' }] });
    await log.compress(KEY, { requestId: 'c2', author: 'human', ranges: [{ startSeq: 5, endSeq: 8, summary: 'Asked about file c1.' }] });
    expect((await log.getSearchContext(KEY, {})).archiveOverview).toBe(`${SUMMARY_FRAME_PREFIX}\nAsked about file c1.`);
  });

  it('rejects a limit that is not a number', async () => {
    const { log } = newLog();
    await expect(log.getSearchContext(KEY, { limit: Number.NaN })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field: 'limit' });
  });
});
