import { ConflictError, InvalidFieldError, NotFoundError } from './errors';
import { CONTEXT_WINDOW_EXCEEDED } from './recovery';
import { ENGINE_SUMMARY_LEAD, OVERFLOW_TOPIC, overflowMarkerSummary, SUMMARY_FRAME_PREFIX } from './text';
import { assistant, conversation, instructions, KEY, newLog, parsedLog, rawLog, system, user } from './__tests__/fixtures';

const overflow = (requestId: string, agentId = 'agent-1') => ({
  requestId,
  agentId,
  failure: { code: CONTEXT_WINDOW_EXCEEDED, message: 'prompt is too long' },
  route: { provider: 'fake', model: 'fake-1' },
});

async function seeded(turns = 6, opts: Parameters<typeof newLog>[0] = {}) {
  const ctx = newLog(opts);
  await ctx.log.appendEvents(KEY, { events: conversation(turns) });
  return ctx;
}

/** What a harness would send to the provider: the projected messages as a request body. */
async function requestBody(log: Awaited<ReturnType<typeof seeded>>['log']): Promise<string> {
  const { messages } = await log.projectSurface(KEY);
  return JSON.stringify({ messages: messages.map((m) => ({ role: m.role, content: m.text, tool_call_id: m.toolCallId, name: m.toolName })) });
}

describe('SessionLog.recoverOverflow', () => {
  it('writes the ledger entry and generation a full projection of the new log gives (it no longer rebuilds the view to get them)', async () => {
    const { log, store } = await seeded(12, { maxOverflowRetries: 3 });
    // A model-written block first, so the engine's are not the first ordinal.
    const ranges = await log.listCompressibleRanges(KEY);
    const r0 = ranges.ranges[0]!;
    const c = await log.compress(KEY, { requestId: 'c1', author: 'model', expectedGeneration: 0, ranges: [{ startSeq: r0.start, endSeq: Math.floor((r0.start + r0.end) / 3), summary: 'first part' }] });
    expect(c.results[0]!.status).toBe('landed');
    for (const id of ['r1']) {
      const res = await log.recoverOverflow(KEY, overflow(id));
      expect(res.reason).toBe('compacted');
      const events = (await parsedLog(store)) as unknown as Parameters<typeof log.viewOf>[0];
      const full = log.viewOf(events);
      expect(res.generation).toBe(full.generation);
      const ledger = await store.readLedger(KEY);
      expect(JSON.parse(ledger[res.block!.blockId]!)).toEqual(JSON.parse(JSON.stringify(full.block(res.block!.blockId))));
    }
  });

  it('passes a non-overflow code through without writing or touching the budget', async () => {
    const { log, store } = await seeded();
    const before = await rawLog(store);
    const res = await log.recoverOverflow(KEY, { ...overflow('r1'), failure: { code: 'RATE_LIMITED' } });
    expect(res).toEqual({ action: 'surface_error', reason: 'not_overflow', budget: { used: 0, max: 1 }, generation: 0 });
    expect(await rawLog(store)).toEqual(before);
    expect(await store.readBudget(KEY, 'agent-1')).toBeNull();
  });

  it('hides exactly one range behind the engine marker and answers retry', async () => {
    const { log, store } = await seeded();
    const before = await rawLog(store);
    const surfaceBefore = (await log.projectSurface(KEY)).messages;
    const res = await log.recoverOverflow(KEY, overflow('r1'));
    expect(res.action).toBe('retry');
    expect(res.reason).toBe('compacted');
    expect(res.budget).toEqual({ used: 1, max: 1 });
    expect(res.generation).toBe(1);

    const events = await parsedLog(store);
    // Originals are untouched; exactly four events were added, in transaction order.
    expect((await rawLog(store)).slice(0, before.length)).toEqual(before);
    const added = events.slice(before.length);
    expect(added.map((e) => e.type)).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']);
    expect(events.filter((e) => e.type === 'compaction/summary')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'user/message').length).toBe(before.filter((j) => j.includes('"user/message"')).length + 1);
    const summary = added[1] as { compactionId: string; summary: string; topic: string; shadowedSeqs: number[]; shadowedRange: { start: number; end: number }; shadowedTokenCount: number };
    const checkpoint = added[2] as { surfaceOp: { startSeq: number; endSeq: number }; sourceEventSeqs: number[]; content: Array<{ text: string }> };
    expect(summary.topic).toBe(OVERFLOW_TOPIC);
    expect(summary.summary).toBe(overflowMarkerSummary(summary.shadowedSeqs.length));
    expect(summary.summary.startsWith(ENGINE_SUMMARY_LEAD)).toBe(true);
    expect(summary.summary).not.toContain(SUMMARY_FRAME_PREFIX);
    // claim range = replace range = shadowedSeqs
    expect(checkpoint.sourceEventSeqs).toEqual(summary.shadowedSeqs);
    expect(checkpoint.surfaceOp).toEqual({ op: 'replace', startSeq: summary.shadowedRange.start, endSeq: summary.shadowedRange.end });
    expect(res.block).toEqual({
      blockId: summary.compactionId,
      start: summary.shadowedSeqs[0],
      end: summary.shadowedSeqs[summary.shadowedSeqs.length - 1],
      hiddenCount: summary.shadowedSeqs.length,
      claimTokens: summary.shadowedTokenCount,
    });
    // The marker count is true.
    expect(summary.summary).toContain(`: ${res.block!.hiddenCount} surface message(s) hidden`);

    // Projected text == stored summary == checkpoint text == Decompress summary; no frame anywhere.
    const { messages } = await log.projectSurface(KEY);
    expect(messages.length).toBe(surfaceBefore.length - summary.shadowedSeqs.length + 1);
    const node = messages.find((m) => m.class === 'checkpoint')!;
    expect(node.text).toBe(summary.summary);
    expect(checkpoint.content[0]!.text).toBe(summary.summary);
    expect((await log.decompress(KEY, { ref: summary.compactionId })).summary).toBe(summary.summary);
    expect(messages.some((m) => m.text.includes(SUMMARY_FRAME_PREFIX))).toBe(false);
    const ledger = await log.getStatus(KEY);
    expect(ledger.blocks).toHaveLength(1);
    expect(ledger.blocks[0]).toMatchObject({ topic: OVERFLOW_TOPIC, author: 'engine', tier: 1, active: true });
  });

  it('puts the marker on the wire and keeps the hidden originals off it', async () => {
    const { log } = await seeded();
    const first = await requestBody(log);
    const res = await log.recoverOverflow(KEY, overflow('r1'));
    const second = await requestBody(log);
    expect(first).not.toContain(ENGINE_SUMMARY_LEAD);
    expect(second).toContain(ENGINE_SUMMARY_LEAD);
    const hidden = await log.decompress(KEY, { ref: res.block!.blockId });
    expect(hidden.items.length).toBe(res.block!.hiddenCount);
    for (const item of hidden.items) {
      const uid = /uid\d+u/.exec(item.text)![0];
      expect(first).toContain(uid);
      expect(second).not.toContain(uid);
    }
    expect(second.length).toBeLessThan(first.length);
  });

  it('refuses a second overflow without progress and writes nothing', async () => {
    const { log, store } = await seeded();
    await log.recoverOverflow(KEY, overflow('r1'));
    const before = await rawLog(store);
    const res = await log.recoverOverflow(KEY, overflow('r2'));
    expect(res).toEqual({ action: 'surface_error', reason: 'budget_spent', budget: { used: 1, max: 1 }, generation: 1 });
    expect(await rawLog(store)).toEqual(before);
  });

  it('gets a fresh budget after an assistant message from that agent', async () => {
    const { log } = await seeded(10);
    await log.recoverOverflow(KEY, overflow('r1'));
    // Another agent's progress does not reset agent-1.
    await log.appendEvents(KEY, { agentId: 'agent-2', events: [user('next uidX1u'), assistant('other agent')] });
    expect((await log.recoverOverflow(KEY, overflow('r2'))).reason).toBe('budget_spent');
    await log.appendEvents(KEY, { agentId: 'agent-1', events: [assistant('progress')] });
    await log.appendEvents(KEY, { events: conversation(4).slice(1) });
    const res = await log.recoverOverflow(KEY, overflow('r3'));
    expect(res.action).toBe('retry');
    expect((await log.getStatus(KEY)).blocks).toHaveLength(2);
  });

  it('gets a fresh budget after the agent reports idle', async () => {
    const { log } = await seeded(10);
    await log.recoverOverflow(KEY, overflow('r1'));
    expect(await log.reportAgentStatus(KEY, { agentId: 'agent-1', status: 'running' })).toEqual({ budget: { used: 1, max: 1 } });
    expect(await log.reportAgentStatus(KEY, { agentId: 'agent-1', status: 'idle' })).toEqual({ budget: { used: 0, max: 1 } });
    await log.appendEvents(KEY, { events: conversation(4).slice(1) });
    expect((await log.recoverOverflow(KEY, overflow('r2'))).action).toBe('retry');
  });

  it('answers nothing_eligible when everything sits in the protected tail', async () => {
    const { log, store } = newLog();
    await log.appendEvents(KEY, { events: [system('sys'), user('hello'), assistant('hi'), user('more'), assistant('sure')] });
    const before = await rawLog(store);
    const res = await log.recoverOverflow(KEY, overflow('r1'));
    expect(res).toEqual({ action: 'surface_error', reason: 'nothing_eligible', budget: { used: 0, max: 1 }, generation: 0 });
    expect(await rawLog(store)).toEqual(before);
    expect((await log.getStatus(KEY)).blocks).toEqual([]);
  });

  it('never compacts an aborted request', async () => {
    const { log, store } = await seeded();
    const before = await rawLog(store);
    expect((await log.recoverOverflow(KEY, { ...overflow('r1'), aborted: true })).reason).toBe('aborted');
    expect(await rawLog(store)).toEqual(before);
  });

  it('never writes with maxOverflowRetries 0', async () => {
    const { log, store } = await seeded(6, { maxOverflowRetries: 0 });
    const before = await rawLog(store);
    expect(await log.recoverOverflow(KEY, overflow('r1'))).toEqual({ action: 'surface_error', reason: 'budget_spent', budget: { used: 0, max: 0 }, generation: 0 });
    expect(await rawLog(store)).toEqual(before);
  });

  it('allows as many recoveries as the configured budget', async () => {
    const { log } = newLog({ maxOverflowRetries: 2 });
    const events = conversation(10);
    events.splice(20, 0, instructions('repo', 'AGENTS.md v1'));
    await log.appendEvents(KEY, { events });
    expect((await log.recoverOverflow(KEY, overflow('r1'))).budget).toEqual({ used: 1, max: 2 });
    expect((await log.recoverOverflow(KEY, overflow('r2'))).budget).toEqual({ used: 2, max: 2 });
    expect((await log.recoverOverflow(KEY, overflow('r3'))).reason).toBe('budget_spent');
    expect((await log.getStatus(KEY)).blocks).toHaveLength(2);
  });

  it('returns the cached response for a repeated requestId and writes nothing', async () => {
    const { log, store } = await seeded();
    const first = await log.recoverOverflow(KEY, overflow('r1'));
    const after = await rawLog(store);
    expect(await log.recoverOverflow(KEY, overflow('r1'))).toEqual(first);
    expect(await rawLog(store)).toEqual(after);
    const refused = await log.recoverOverflow(KEY, { ...overflow('r2'), failure: { code: 'OTHER' } });
    // Even a changed body under a seen id gets the first answer.
    expect(await log.recoverOverflow(KEY, overflow('r2'))).toEqual(refused);
  });

  it('hides the highest-ranked range ListCompressibleRanges offers, the oldest on a tie', async () => {
    const { log } = newLog();
    // Two runs of equal rank separated by instruction rows (barriers), and a bigger third one.
    const big = 'x'.repeat(800);
    await log.appendEvents(KEY, {
      events: [
        system('sys'),
        user('a uid1u'),
        assistant('b uid2u'),
        instructions('repo', 'v1'),
        user('c uid3u'),
        assistant('d uid4u'),
        instructions('other', 'v1'),
        user(`e uid5u ${big}`),
        assistant(`f uid6u ${big}`),
        instructions('third', 'v1'),
        // The protected tail: five nodes.
        user('g'),
        assistant('h'),
        user('i'),
        assistant('j'),
        user('k'),
      ],
    });
    const { ranges } = await log.listCompressibleRanges(KEY);
    expect(ranges.map((r) => [r.start, r.end])).toEqual([
      [1, 2],
      [4, 5],
      [7, 8],
    ]);
    let res = await log.recoverOverflow(KEY, overflow('r1'));
    expect([res.block!.start, res.block!.end]).toEqual([7, 8]);
    await log.reportAgentStatus(KEY, { agentId: 'agent-1', status: 'idle' });
    const next = (await log.listCompressibleRanges(KEY)).ranges;
    expect(next[0]!.rankTokens).toBe(next[1]!.rankTokens);
    res = await log.recoverOverflow(KEY, overflow('r2'));
    expect([res.block!.start, res.block!.end]).toEqual([1, 2]);
  });

  it('validates its input', async () => {
    const { log } = await seeded();
    await expect(log.recoverOverflow(KEY, { ...overflow('r1'), agentId: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field: 'agentId' });
    await expect(log.recoverOverflow(KEY, { ...overflow('r2'), failure: { code: '' } })).rejects.toMatchObject({ field: 'failure.code' });
    await expect(log.recoverOverflow(KEY, { ...overflow('r3'), failure: undefined as never })).rejects.toBeInstanceOf(InvalidFieldError);
    await expect(log.recoverOverflow(KEY, { ...overflow(''), requestId: '' })).rejects.toMatchObject({ field: 'requestId' });
    await expect(log.recoverOverflow(KEY, { ...overflow('r4'), window: { contextTokens: 0, reservedOutputTokens: 0 } })).rejects.toMatchObject({
      field: 'window.contextTokens',
    });
    await expect(log.recoverOverflow(KEY, { ...overflow('r5'), window: { contextTokens: 100, reservedOutputTokens: 100 } })).rejects.toMatchObject({
      field: 'window.reservedOutputTokens',
    });
    await expect(log.recoverOverflow({ ...KEY, sessionId: 'nope' }, overflow('r6'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(log.recoverOverflow({ ...KEY, sessionId: 'nope' }, overflow('r6'))).rejects.toMatchObject({ code: 'NOT_FOUND', reason: 'SESSION_NOT_FOUND' });
  });

  it('produces exactly one block from two concurrent calls of one agent', async () => {
    const { log } = await seeded(10);
    const [a, b] = await Promise.all([log.recoverOverflow(KEY, overflow('r1')), log.recoverOverflow(KEY, overflow('r2'))]);
    expect((await log.getStatus(KEY)).blocks).toHaveLength(1);
    expect([a.action, b.action]).toEqual(['retry', 'retry']);
    expect(a.block!.blockId).toBe(b.block!.blockId);
    expect(await log.reportAgentStatus(KEY, { agentId: 'agent-1', status: 'running' })).toEqual({ budget: { used: 1, max: 1 } });
  });

  it('produces exactly one block from two concurrent calls of different agents', async () => {
    const { log } = await seeded(10);
    const results = await Promise.all([log.recoverOverflow(KEY, overflow('r1', 'agent-1')), log.recoverOverflow(KEY, overflow('r2', 'agent-2'))]);
    expect((await log.getStatus(KEY)).blocks).toHaveLength(1);
    expect(results.every((r) => r.action === 'retry')).toBe(true);
  });

  it('gives up after a second conflict with conflict_retry_exhausted, uncached', async () => {
    const { log, store } = await seeded(10);
    const commit = store.commit.bind(store);
    let stale = 2;
    store.commit = async (key, m) => {
      if (stale > 0 && m.budgetCharge) {
        stale--;
        // Simulate a writer landing between snapshot and commit.
        await log.appendEvents(KEY, { events: [{ type: 'turn/start' }] });
      }
      return commit(key, m);
    };
    const res = await log.recoverOverflow(KEY, overflow('r1'));
    expect(res.reason).toBe('conflict_retry_exhausted');
    expect(res.action).toBe('surface_error');
    expect((await log.getStatus(KEY)).blocks).toHaveLength(0);
    // Not cached: the same request can try again.
    expect((await log.recoverOverflow(KEY, overflow('r1'))).reason).toBe('compacted');
  });

  it('recomputes once after an unrelated conflict and lands', async () => {
    const { log, store } = await seeded(10);
    const commit = store.commit.bind(store);
    let stale = 1;
    store.commit = async (key, m) => {
      if (stale > 0 && m.budgetCharge) {
        stale--;
        await log.appendEvents(KEY, { events: [{ type: 'turn/start' }] });
      }
      return commit(key, m);
    };
    expect((await log.recoverOverflow(KEY, overflow('r1'))).reason).toBe('compacted');
    expect((await log.getStatus(KEY)).blocks).toHaveLength(1);
  });

  it('is deterministic: the same log gives the same surface, ranges and marker bytes', async () => {
    const a = await seeded(8);
    const b = await seeded(8);
    expect(await a.log.listCompressibleRanges(KEY)).toEqual(await b.log.listCompressibleRanges(KEY));
    await a.log.recoverOverflow(KEY, overflow('r1'));
    await b.log.recoverOverflow(KEY, overflow('r1'));
    expect(await rawLog(a.store)).toEqual(await rawLog(b.store));
    expect(await a.log.projectSurface(KEY)).toEqual(await b.log.projectSurface(KEY));
  });

  it('is typed for the wiring: stale conflicts are ABORTED with head and generation', () => {
    const e = new ConflictError('STALE_EXPECTED_HEAD', 'x', 4, 2);
    expect(e).toMatchObject({ name: 'ConflictError', code: 'ABORTED', metadata: { head: '4', generation: '2' } });
  });
});
