/**
 * SessionsService over real gRPC on port 0, on the embedded SQLite file and on real Redis:
 * every row of overflow-recovery §3.6 with its gRPC status, the §3.5 invariants that need
 * the wire (concurrency, idempotency, budget lifecycle, read-only generation), capture,
 * search context and workspaces.
 */
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { checkHealth, Code, CtxError } from '@ctxmesh/rpc';
import { CONTEXT_WINDOW_EXCEEDED, ENGINE_SUMMARY_LEAD, SUMMARY_FRAME_PREFIX } from '../src';
import { assistant, assistantCalls, call, conversation, instructions, result, system, user } from '../src/domain/__tests__/fixtures';
import {
  counterIds,
  embeddedFixture,
  identity,
  keyOf,
  redisClient,
  redisFixture,
  serveSessions,
  wire,
  type SessionsHarness,
  type StoreFixture,
} from './sessions-harness';

const overflow = (requestId: string, agentId = 'agent-1') => ({
  requestId,
  agentId,
  failure: { code: CONTEXT_WINDOW_EXCEEDED, message: 'prompt is too long' },
  route: { provider: 'p', model: 'm' },
});

/** The rejection of a call, as the CtxError the client raised. */
async function rejection(p: Promise<unknown>): Promise<CtxError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CtxError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

/**
 * The answers of concurrent recoveries that produced exactly one block: at least one retry,
 * every retry names that block, and every other answer is a refusal that wrote nothing.
 */
function expectOneReduction(answers: Array<{ action: string; reason: string; block?: { blockId: string } }>, blockId: string): void {
  expect(answers.some((r) => r.action === 'retry')).toBe(true);
  for (const r of answers) {
    if (r.action === 'retry') expect(r.block?.blockId).toBe(blockId);
    else expect(['budget_spent', 'nothing_eligible']).toContain(r.reason);
  }
}

let redis: Redis;
beforeAll(() => {
  redis = redisClient();
});
afterAll(async () => {
  await redis.quit();
});

function describeSessionsService(name: string, open: () => StoreFixture) {
  describe(`SessionsService on ${name}`, () => {
    let fx: StoreFixture;
    let h: SessionsHarness;
    let sid: string;
    const extra: SessionsHarness[] = [];
    beforeEach(async () => {
      fx = open();
      h = await serveSessions(fx.store, { newId: counterIds(`${randomUUID().slice(0, 8)}-0000-4000-8000-`) });
      sid = `s-${randomUUID()}`;
    });
    afterEach(async () => {
      await Promise.all([h, ...extra.splice(0)].map((x) => x.close()));
      await fx.dispose();
    });

    /** Append a conversation of `turns` turns; returns the head. */
    async function seed(turns = 6, size = 200): Promise<number> {
      return (await h.api.appendEvents({ sessionId: sid, events: conversation(turns, size).map(wire) })).head;
    }
    const eventCount = async () => (await fx.store.snapshot(keyOf(sid), -1))?.events.length ?? 0;

    // -------------------------------------------------------------------------------------
    // §3.6: unknown session

    it.each([
      ['ProjectSurface', (h: SessionsHarness, s: string) => h.api.projectSurface({ sessionId: s })],
      ['ListCompressibleRanges', (h: SessionsHarness, s: string) => h.api.listCompressibleRanges({ sessionId: s })],
      ['Compress', (h: SessionsHarness, s: string) => h.api.compress({ sessionId: s, requestId: 'r', author: 'model', ranges: [{ startSeq: 0, endSeq: 1, summary: 'x' }] })],
      ['Decompress', (h: SessionsHarness, s: string) => h.api.decompress({ sessionId: s, ref: 'b1' })],
      ['SearchContext', (h: SessionsHarness, s: string) => h.api.searchContext({ sessionId: s, query: 'x' })],
      ['RecoverOverflow', (h: SessionsHarness, s: string) => h.api.recoverOverflow({ sessionId: s, ...overflow('r') })],
      ['ReportAgentStatus', (h: SessionsHarness, s: string) => h.api.reportAgentStatus({ sessionId: s, agentId: 'a', status: 'idle' })],
      ['GetStatus', (h: SessionsHarness, s: string) => h.api.getStatus({ sessionId: s })],
    ])('SessionsService.%s - unknown session id - NOT_FOUND', async (_rpc, run) => {
      const e = await rejection(run(h, sid));
      expect(e).toMatchObject({ code: Code.NOT_FOUND, reason: 'SESSION_NOT_FOUND', domain: 'sessions', metadata: { sessionId: sid } });
    });

    it('SessionsService.GetStatus - session of another user with the same id - NOT_FOUND', async () => {
      await seed(1);
      const other = await rejection(h.api.getStatus({ sessionId: sid, identity: identity('acme', 'bob') }));
      expect(other.code).toBe(Code.NOT_FOUND);
    });

    it('SessionsService.AppendEvents - identity without a user - INVALID_ARGUMENT', async () => {
      const e = await rejection(h.api.appendEvents({ sessionId: sid, identity: identity('acme', ''), events: [wire(user('x'))] }));
      expect(e).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' });
    });

    // -------------------------------------------------------------------------------------
    // §3.6: stale expectations

    it('SessionsService.AppendEvents - stale expected_head - ABORTED with the current head and generation', async () => {
      const head = await seed(2);
      const e = await rejection(h.api.appendEvents({ sessionId: sid, expectedHead: head - 1, events: [wire(user('late'))] }));
      expect(e).toMatchObject({ code: Code.ABORTED, reason: 'STALE_EXPECTED_HEAD', metadata: { head: String(head), generation: '0' } });
      expect(await eventCount()).toBe(head + 1);
      expect((await h.api.appendEvents({ sessionId: sid, expectedHead: head, events: [wire(user('on time'))] })).seqs).toEqual([head + 1]);
    });

    it('SessionsService.Compress - stale expected_generation - ABORTED with the current head and generation', async () => {
      const head = await seed(6);
      await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 4, summary: 'first' }] });
      const e = await rejection(
        h.api.compress({ sessionId: sid, requestId: 'c2', author: 'model', expectedGeneration: 0, ranges: [{ startSeq: 5, endSeq: 8, summary: 'second' }] }),
      );
      expect(e).toMatchObject({ code: Code.ABORTED, reason: 'STALE_EXPECTED_GENERATION', metadata: { head: String(head + 4), generation: '1' } });
    });

    // -------------------------------------------------------------------------------------
    // §3.6: engine-owned and malformed events

    it.each([
      ['a compaction/* event', { type: 'compaction/summary', summary: 'x' }, 'ENGINE_OWNED_EVENT', 'events[0].type'],
      ['a surfaceOp', { ...user('x'), surfaceOp: { op: 'replace', startSeq: 0, endSeq: 0 } }, 'ENGINE_OWNED_EVENT', 'events[0].surfaceOp'],
      ['a checkpoint source', user('x', { kind: 'compact-checkpoint', compactionId: 'c' }), 'ENGINE_OWNED_EVENT', 'events[0].source.kind'],
      ['a tool result with no call id', { type: 'tool/result', content: [{ type: 'text', text: 'x' }] }, 'MALFORMED_EVENT', 'events[0].callId'],
      ['an unknown type', { type: 'user/shout', content: [] }, 'MALFORMED_EVENT', 'events[0].type'],
      ['an empty message', { type: 'user/message', content: [] }, 'MALFORMED_EVENT', 'events[0].content'],
    ])('SessionsService.AppendEvents - %s - INVALID_ARGUMENT naming the field', async (_what, event, reason, field) => {
      const e = await rejection(h.api.appendEvents({ sessionId: sid, events: [wire(event)] }));
      expect(e).toMatchObject({ code: Code.INVALID_ARGUMENT, reason, metadata: { field } });
      expect(e.message).toContain(field);
      expect(await fx.store.snapshot(keyOf(sid), -1)).toBeNull();
    });

    it('SessionsService.AppendEvents - event JSON that is not JSON, or disagrees with its type - INVALID_ARGUMENT', async () => {
      const bad = await rejection(h.api.appendEvents({ sessionId: sid, events: [{ type: 'user/message', json: '{nope', seq: 0 }] }));
      expect(bad).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'events[0].json' } });
      const mismatch = await rejection(h.api.appendEvents({ sessionId: sid, events: [{ type: 'assistant/message', json: JSON.stringify(user('x')), seq: 0 }] }));
      expect(mismatch).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'events[0].type' } });
      // The wire type fills a JSON object that leaves it out.
      const { type: _t, ...untyped } = user('typed by the wire');
      expect((await h.api.appendEvents({ sessionId: sid, events: [{ type: 'user/message', json: JSON.stringify(untyped), seq: 0 }] })).seqs).toEqual([0]);
    });

    it('SessionsService.AppendEvents - unanswered call followed by a user turn - OK with the prune in the same write', async () => {
      const res = await h.api.appendEvents({ sessionId: sid, events: [system('s'), user('q'), assistantCalls('', call('c1')), user('never mind')].map(wire) });
      expect(res.seqs).toEqual([0, 1, 2, 5]);
      expect(res.prunes).toEqual([expect.objectContaining({ reason: 'unanswered-tool-call', shadowedSeqs: [2], stubSeq: 4 })]);
      expect(res.generation).toBe(1);
    });

    // -------------------------------------------------------------------------------------
    // §3.6: Compress inputs

    it.each([
      ['a reversed range', { startSeq: 8, endSeq: 1, summary: 's' }, 'REVERSED_RANGE', 'ranges[0]'],
      ['a negative seq', { startSeq: -1, endSeq: 4, summary: 's' }, 'INVALID_FIELD', 'ranges[0].startSeq'],
      ['an edge not in the log', { startSeq: 1, endSeq: 999, summary: 's' }, 'SEQ_NOT_IN_LOG', 'ranges[0].endSeq'],
      ['a blank summary', { startSeq: 1, endSeq: 4, summary: '   ' }, 'INVALID_FIELD', 'ranges[0].summary'],
      ['a missing start', { endSeq: 4, summary: 's' }, 'INVALID_FIELD', 'ranges[0].startSeq'],
      ['a missing end', { startSeq: 1, summary: 's' }, 'INVALID_FIELD', 'ranges[0].endSeq'],
    ])('SessionsService.Compress - %s - INVALID_ARGUMENT', async (_what, range, reason, field) => {
      await seed(6);
      const before = await eventCount();
      const e = await rejection(h.api.compress({ sessionId: sid, requestId: 'r', author: 'model', ranges: [range] }));
      expect(e).toMatchObject({ code: Code.INVALID_ARGUMENT, reason, metadata: { field } });
      if (reason === 'SEQ_NOT_IN_LOG') expect(e.message).toMatch(/ListCompressibleRanges or GetStatus/);
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService.Compress - span already fully hidden - OK already_compressed with the covering block, nothing written', async () => {
      await seed(6);
      const first = await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 8, summary: 's' }] });
      const before = await eventCount();
      const res = await h.api.compress({ sessionId: sid, requestId: 'c2', author: 'model', ranges: [{ startSeq: 2, endSeq: 6, summary: 's2' }] });
      expect(res.results[0]).toMatchObject({ status: 'already_compressed', coveringBlockIds: [first.results[0]!.blockId], blockId: '' });
      expect(res.generation).toBe(1);
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService.Compress - span over guarded rows - OK guarded with the compressible slices, nothing written', async () => {
      await seed(6);
      const before = await eventCount();
      const res = await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'human', ranges: [{ startSeq: 13, endSeq: 24, summary: 's' }] });
      expect(res.results[0]).toMatchObject({ status: 'guarded', guardedSeqs: [20, 21, 22, 23, 24] });
      expect(res.results[0]!.compressible.map((c) => [c.start, c.end])).toEqual([[13, 19]]);
      expect(res.results[0]!.detail).toContain('last-user-turn');
      expect(res.generation).toBe(0);
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService.Compress - a call still waiting for its result - OK unbalanced', async () => {
      const { head } = await h.api.appendEvents({ sessionId: sid, events: [...conversation(3), user('go'), assistantCalls('', call('pending'))].map(wire) });
      const res = await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'model', ranges: [{ startSeq: head, endSeq: head, summary: 's' }] });
      expect(res.results[0]!.status).toBe('unbalanced');
      expect(res.generation).toBe(0);
    });

    it('SessionsService.Compress - a landed block - OK and projected, stored and decompressed summaries are the same bytes', async () => {
      await seed(6);
      const res = await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'model', route: { provider: 'p', model: 'm' }, ranges: [{ startSeq: 1, endSeq: 8, summary: 'Read two files.' }] });
      const r = res.results[0]!;
      expect(r).toMatchObject({ status: 'landed', start: 1, end: 8, shadowedSeqs: [1, 2, 3, 4, 5, 6, 7, 8], tier: 1, kernelRef: 'b1', guardedSeqs: [] });
      const surface = await h.api.projectSurface({ sessionId: sid });
      const checkpoint = surface.messages.find((m) => m.class === 'checkpoint')!;
      const page = await h.api.decompress({ sessionId: sid, ref: 'b1' });
      expect(checkpoint.text).toBe(`${SUMMARY_FRAME_PREFIX}\nRead two files.`);
      expect(page.summary).toBe(checkpoint.text);
      expect(page).toMatchObject({ blockId: r.blockId, kind: 'block', kernelRef: 'b1', tier: 1, total: 8, offset: 0 });
      const status = await h.api.getStatus({ sessionId: sid });
      expect(status.blocks).toEqual([
        expect.objectContaining({ blockId: r.blockId, kernelRef: 'b1', author: 'model', claimTokens: r.claimTokens, hiddenCount: 8, active: true, summarySeq: checkpoint.seq }),
      ]);
      expect(status.checkpointSeqs).toEqual([checkpoint.seq]);
      expect(status.claims!.projected).toBe(status.claims!.appended - status.claims!.claimed);
      expect(status.claims!.projected).toBeGreaterThanOrEqual(0);
      expect(status.estimatorId).toBe('ctxmesh-claim-v1');
    });

    // -------------------------------------------------------------------------------------
    // §3.6: Decompress and SearchContext inputs

    it('SessionsService.Decompress - unknown ref - NOT_FOUND; prefix of two blocks - INVALID_ARGUMENT ambiguous', async () => {
      await seed(8);
      const res = await h.api.compress({
        sessionId: sid,
        requestId: 'c1',
        author: 'model',
        ranges: [
          { startSeq: 1, endSeq: 4, summary: 'one' },
          { startSeq: 5, endSeq: 8, summary: 'two' },
        ],
      });
      const [a, b] = res.results.map((r) => r.blockId);
      expect(a!.slice(0, 8)).toBe(b!.slice(0, 8));
      expect(await rejection(h.api.decompress({ sessionId: sid, ref: 'b9' }))).toMatchObject({ code: Code.NOT_FOUND, reason: 'BLOCK_NOT_FOUND' });
      expect(await rejection(h.api.decompress({ sessionId: sid, ref: 'ffffffff' }))).toMatchObject({ code: Code.NOT_FOUND });
      const amb = await rejection(h.api.decompress({ sessionId: sid, ref: a!.slice(0, 8) }));
      expect(amb.code).toBe(Code.INVALID_ARGUMENT);
      expect(amb.message).toMatch(/ambiguous/);
      expect((await h.api.decompress({ sessionId: sid, ref: b! })).blockId).toBe(b);
    });

    it('SessionsService.Decompress - offset past the end, negative or huge offset and limit - OK, clamped, never an error', async () => {
      await seed(6);
      await h.api.compress({ sessionId: sid, requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 8, summary: 's' }] });
      const past = await h.api.decompress({ sessionId: sid, ref: 'b1', offset: 50 });
      expect(past).toMatchObject({ items: [], total: 8, offset: 50, nextOffset: undefined });
      expect(past.note).not.toBe('');
      const neg = await h.api.decompress({ sessionId: sid, ref: 'b1', offset: -5, limit: -3 });
      expect(neg).toMatchObject({ offset: 0, nextOffset: 1 });
      expect(neg.items.map((i) => i.seq)).toEqual([1]);
      const huge = await h.api.decompress({ sessionId: sid, ref: 'b1', offset: 2, limit: 1_000_000 });
      expect(huge.items.map((i) => i.seq)).toEqual([3, 4, 5, 6, 7, 8]);
      expect(huge.nextOffset).toBeUndefined();
      // limit 0 is the proto default: a full page.
      expect((await h.api.decompress({ sessionId: sid, ref: 'b1' })).items).toHaveLength(8);
    });

    it('SessionsService.SearchContext - empty or blank query - OK zero hits; limit <= 0 means 5', async () => {
      await seed(12);
      await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1') });
      expect((await h.api.searchContext({ sessionId: sid, query: '' })).hits).toEqual([]);
      expect((await h.api.searchContext({ sessionId: sid, query: '   ' })).hits).toEqual([]);
      const hits = (await h.api.searchContext({ sessionId: sid, query: 'question file answer', limit: 0 })).hits;
      expect(hits).toHaveLength(5);
      expect((await h.api.searchContext({ sessionId: sid, query: 'question file answer', limit: 7 })).hits).toHaveLength(7);
    });

    // -------------------------------------------------------------------------------------
    // §3.6: RecoverOverflow

    it('SessionsService.RecoverOverflow - another failure code - OK surface_error/not_overflow, no writes', async () => {
      await seed(12);
      const before = await eventCount();
      const res = await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1'), failure: { code: 'RATE_LIMITED' } });
      expect(res).toMatchObject({ action: 'surface_error', reason: 'not_overflow', block: undefined, budget: { used: 0, max: 1 }, generation: 0 });
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService.RecoverOverflow - aborted request - OK surface_error/aborted, no writes', async () => {
      await seed(12);
      const before = await eventCount();
      expect(await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1'), aborted: true })).toMatchObject({ action: 'surface_error', reason: 'aborted' });
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService.RecoverOverflow - nothing eligible - OK surface_error/nothing_eligible, no phantom block', async () => {
      await h.api.appendEvents({ sessionId: sid, events: [system('s'), user('q'), assistant('a'), user('q2')].map(wire) });
      const res = await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1') });
      expect(res).toMatchObject({ action: 'surface_error', reason: 'nothing_eligible', budget: { used: 0, max: 1 } });
      expect(await eventCount()).toBe(4);
      expect((await h.api.getStatus({ sessionId: sid })).blocks).toEqual([]);
    });

    it.each([
      ['a missing agent_id', { agentId: '' }, 'agentId'],
      ['a missing failure', { failure: undefined }, 'failure.code'],
      ['a blank failure.code', { failure: { code: ' ' } }, 'failure.code'],
      ['a window with context_tokens 0', { window: { contextTokens: 0, reservedOutputTokens: 0 } }, 'window.contextTokens'],
      ['a window whose reserve eats it', { window: { contextTokens: 1000, reservedOutputTokens: 1000 } }, 'window.reservedOutputTokens'],
    ])('SessionsService.RecoverOverflow - %s - INVALID_ARGUMENT', async (_what, patch, field) => {
      await seed(12);
      const before = await eventCount();
      const e = await rejection(h.api.recoverOverflow({ sessionId: sid, ...overflow('r1'), ...patch }));
      expect(e).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field } });
      expect(await eventCount()).toBe(before);
    });

    it.each([
      [{ contextTokens: -5, reservedOutputTokens: 0 }, 'window.contextTokens'],
      [{ contextTokens: 100, reservedOutputTokens: 200 }, 'window.reservedOutputTokens'],
    ])('SessionsService.ProjectSurface - window %j - INVALID_ARGUMENT', async (window, field) => {
      await seed(1);
      expect(await rejection(h.api.projectSurface({ sessionId: sid, window }))).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field } });
    });

    it('SessionsService.RecoverOverflow - first overflow - OK retry with one engine-marked block whose count is true', async () => {
      await seed(12);
      const ranges = await h.api.listCompressibleRanges({ sessionId: sid, preserveRecent: 5 });
      const best = [...ranges.ranges].sort((a, b) => b.rankTokens - a.rankTokens || a.start - b.start)[0]!;
      const res = await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1'), window: { contextTokens: 2000, reservedOutputTokens: 500 } });
      expect(res).toMatchObject({ action: 'retry', reason: 'compacted', budget: { used: 1, max: 1 }, generation: 1 });
      expect(res.block).toMatchObject({ start: best.start, end: best.end });
      const page = await h.api.decompress({ sessionId: sid, ref: res.block!.blockId });
      expect(page.total).toBe(res.block!.hiddenCount);
      expect(page.summary.startsWith(ENGINE_SUMMARY_LEAD)).toBe(true);
      expect(page.summary).toContain(`${res.block!.hiddenCount} surface message(s)`);
      expect(page.summary).not.toContain(SUMMARY_FRAME_PREFIX);
      const marker = (await h.api.projectSurface({ sessionId: sid })).messages.find((m) => m.class === 'checkpoint')!;
      expect(marker.text).toBe(page.summary);
    });

    it('SessionsService.RecoverOverflow - budget lifecycle with max 1 - retry, budget_spent with zero writes, reset by an assistant message and by idle', async () => {
      await seed(12);
      expect((await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1') })).action).toBe('retry');
      const afterFirst = await eventCount();
      const spent = await h.api.recoverOverflow({ sessionId: sid, ...overflow('r2') });
      expect(spent).toMatchObject({ action: 'surface_error', reason: 'budget_spent', budget: { used: 1, max: 1 } });
      expect(await eventCount()).toBe(afterFirst);
      // Progress: an assistant message from the agent resets its budget in the same write.
      const more = (extraTurns: number) => conversation(extraTurns).slice(1).map(wire);
      await h.api.appendEvents({ sessionId: sid, agentId: 'agent-1', events: [wire(assistant('recovered')), wire(user('and more')), ...more(3)] });
      expect((await h.api.getStatus({ sessionId: sid })).budgets).toEqual([]);
      expect((await h.api.recoverOverflow({ sessionId: sid, ...overflow('r3') })).action).toBe('retry');
      expect((await h.api.recoverOverflow({ sessionId: sid, ...overflow('r4') })).reason).toBe('budget_spent');
      // Another agent's assistant message is not this agent's progress.
      await h.api.appendEvents({ sessionId: sid, agentId: 'agent-2', events: [wire(assistant('other')), ...more(3)] });
      expect((await h.api.recoverOverflow({ sessionId: sid, ...overflow('r5') })).reason).toBe('budget_spent');
      // Terminal: idle resets it ('running' changes nothing).
      expect(await h.api.reportAgentStatus({ sessionId: sid, agentId: 'agent-1', status: 'running' })).toEqual({ budget: { used: 1, max: 1 } });
      expect(await h.api.reportAgentStatus({ sessionId: sid, agentId: 'agent-1', status: 'idle' })).toEqual({ budget: { used: 0, max: 1 } });
      expect((await h.api.recoverOverflow({ sessionId: sid, ...overflow('r6') })).action).toBe('retry');
      expect((await h.api.getStatus({ sessionId: sid })).blocks).toHaveLength(3);
    });

    it('SessionsService.ReportAgentStatus - unknown status or missing agent - INVALID_ARGUMENT', async () => {
      await seed(1);
      expect(await rejection(h.api.reportAgentStatus({ sessionId: sid, agentId: 'a', status: 'sleeping' }))).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'status' } });
      expect(await rejection(h.api.reportAgentStatus({ sessionId: sid, agentId: '', status: 'idle' }))).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'agentId' } });
    });

    it('SessionsService.RecoverOverflow - repeated request_id - OK the cached first response, no new writes', async () => {
      await seed(12);
      const first = await h.api.recoverOverflow({ sessionId: sid, ...overflow('same') });
      const after = await eventCount();
      const again = await h.api.recoverOverflow({ sessionId: sid, ...overflow('same') });
      expect(again).toEqual(first);
      expect(await eventCount()).toBe(after);
      // Even a different failure under the same id answers the first response.
      expect(await h.api.recoverOverflow({ sessionId: sid, ...overflow('same'), failure: { code: 'OTHER' } })).toEqual(first);
      // A refusal is cached too.
      const refused = await h.api.recoverOverflow({ sessionId: sid, ...overflow('other-id') });
      expect(refused.reason).toBe('budget_spent');
      await h.api.reportAgentStatus({ sessionId: sid, agentId: 'agent-1', status: 'idle' });
      expect(await h.api.recoverOverflow({ sessionId: sid, ...overflow('other-id') })).toEqual(refused);
    });

    it('SessionsService.RecoverOverflow - two concurrent calls on one session - exactly one block', async () => {
      await seed(12);
      const [a, b] = await Promise.all([h.api.recoverOverflow({ sessionId: sid, ...overflow('ra') }), h.api.recoverOverflow({ sessionId: sid, ...overflow('rb') })]);
      const status = await h.api.getStatus({ sessionId: sid });
      expect(status.blocks).toHaveLength(1);
      const events = (await fx.store.snapshot(keyOf(sid), -1))!.events;
      expect(events.filter((e) => e.includes('"compaction/start"'))).toHaveLength(1);
      // Whichever way the two interleave, one budget unit is spent, every retry names the one
      // block, and a caller that saw the block land first is refused without a write.
      expect(status.budgets).toEqual([{ agentId: 'agent-1', budget: { used: 1, max: 1 } }]);
      expectOneReduction([a, b], status.blocks[0]!.blockId);
    });

    it('SessionsService.RecoverOverflow - two concurrent calls on two replicas - exactly one block', async () => {
      await seed(12);
      const twin = await serveSessions(fx.store, { newId: counterIds('tttttttt-0000-4000-8000-') });
      extra.push(twin);
      // Warm both replicas' caches so both plan from the same snapshot.
      await Promise.all([h.api.listCompressibleRanges({ sessionId: sid }), twin.api.listCompressibleRanges({ sessionId: sid })]);
      const res = await Promise.all([
        h.api.recoverOverflow({ sessionId: sid, ...overflow('ra', 'agent-a') }),
        twin.api.recoverOverflow({ sessionId: sid, ...overflow('rb', 'agent-b') }),
      ]);
      const blocks = (await twin.api.getStatus({ sessionId: sid })).blocks;
      expect(blocks).toHaveLength(1);
      expectOneReduction(res, blocks[0]!.blockId);
    });

    it('SessionsService.RecoverOverflow - max 0 - OK budget_spent and never writes', async () => {
      await seed(12);
      const off = await serveSessions(fx.store, { maxOverflowRetries: 0 });
      extra.push(off);
      const before = await eventCount();
      expect(await off.api.recoverOverflow({ sessionId: sid, ...overflow('r1') })).toMatchObject({ action: 'surface_error', reason: 'budget_spent', budget: { used: 0, max: 0 } });
      expect(await eventCount()).toBe(before);
    });

    it('SessionsService reads - ProjectSurface, ListCompressibleRanges, Decompress, SearchContext, GetStatus - never move the generation', async () => {
      await seed(12);
      await h.api.recoverOverflow({ sessionId: sid, ...overflow('r1') });
      const { head, generation } = await h.api.getStatus({ sessionId: sid });
      await h.api.projectSurface({ sessionId: sid, includeRanges: true, window: { contextTokens: 100, reservedOutputTokens: 10 } });
      await h.api.listCompressibleRanges({ sessionId: sid, preserveRecent: 0 });
      await h.api.decompress({ sessionId: sid, ref: 'b1' });
      await h.api.searchContext({ sessionId: sid, query: 'question' });
      await h.api.getSearchContext({ sessionId: sid, limit: 3 });
      expect(await h.api.getStatus({ sessionId: sid })).toMatchObject({ head, generation });
    });

    it('SessionsService.ProjectSurface - window and ranges - OK with the window arithmetic and tool call fields', async () => {
      await seed(6, 50);
      const res = await h.api.projectSurface({ sessionId: sid, window: { contextTokens: 300, reservedOutputTokens: 100 }, includeRanges: true, preserveRecent: 2 });
      expect(res.inputBudget).toBe(200);
      expect(res.overWindow).toBe(res.rankTokens > 200);
      expect(res.ranges.length).toBeGreaterThan(0);
      const callMsg = res.messages.find((m) => m.toolCallId === 'c0' && m.role === 'assistant')!;
      expect(callMsg).toMatchObject({ id: `${callMsg.seq}#c0`, toolName: 'read_file', toolArgs: '{"path":"/src/c0.ts"}' });
      const resultMsg = res.messages.find((m) => m.toolCallId === 'c0' && m.role === 'tool')!;
      expect(resultMsg).toMatchObject({ toolName: 'read_file', toolArgs: '' });
      expect(res.messages.filter((m) => m.role === 'user').every((m) => m.toolCallId === '' && m.toolName === '')).toBe(true);
      // The table with preserve_recent 2 and with the default 5 differ only in the tail.
      const def = await h.api.listCompressibleRanges({ sessionId: sid });
      expect(def.ranges.at(-1)!.end).toBeLessThanOrEqual(res.ranges.at(-1)!.end);
    });

    // -------------------------------------------------------------------------------------
    // Capture, search context, workspaces

    it('SessionsService.AppendMessages - captured pairs - OK as user/assistant events; bad role - INVALID_ARGUMENT', async () => {
      const res = await h.api.appendMessages({ sessionId: sid, messages: [{ role: 'user', content: 'what shipped?' }, { role: 'assistant', content: 'the proxy' }] });
      expect(res).toEqual({ seqs: [0, 1], messageCount: 2 });
      const surface = await h.api.projectSurface({ sessionId: sid });
      expect(surface.messages.map((m) => [m.role, m.class, m.text])).toEqual([
        ['user', 'real', 'what shipped?'],
        ['assistant', 'real', 'the proxy'],
      ]);
      const e = await rejection(h.api.appendMessages({ sessionId: sid, messages: [{ role: 'system', content: 'x' }] }));
      expect(e).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'messages[0].role' } });
    });

    it('SessionsService.GetSearchContext - unknown session without create - OK exists false; with create - OK created once', async () => {
      expect(await h.api.getSearchContext({ sessionId: sid, limit: 5 })).toEqual({ exists: false, created: false, messages: [], archiveOverview: '' });
      expect(await fx.store.snapshot(keyOf(sid), -1)).toBeNull();
      expect(await h.api.getSearchContext({ sessionId: sid, create: true })).toMatchObject({ exists: true, created: true });
      expect(await h.api.getSearchContext({ sessionId: sid, create: true })).toMatchObject({ exists: true, created: false });
      await h.api.appendMessages({ sessionId: sid, messages: [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1' }, { role: 'user', content: 'q2' }] });
      await h.api.appendEvents({ sessionId: sid, events: [wire(instructions('repo', 'AGENTS.md'))] });
      expect((await h.api.getSearchContext({ sessionId: sid, limit: 2 })).messages).toEqual([
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'q2' },
      ]);
    });

    it("SessionsService workspaces - create, activate, resolve - OK; unknown NOT_FOUND; another account's name is its own", async () => {
      const slug = `w-${randomUUID().slice(0, 8)}`;
      const other = identity('globex', 'eve');
      expect(await h.api.getActiveWorkspace({})).toEqual({ workspace: 'default', persisted: false });
      expect(await h.api.createWorkspace({ workspace: slug })).toEqual({ workspace: slug, created: true });
      expect(await h.api.createWorkspace({ workspace: slug, identity: identity('acme', 'bob') })).toEqual({ workspace: slug, created: false });
      expect(await rejection(h.api.createWorkspace({ workspace: 'Not A Slug' }))).toMatchObject({ code: Code.INVALID_ARGUMENT, metadata: { field: 'workspace' } });
      expect(await h.api.setActiveWorkspace({ workspace: slug })).toEqual({ workspace: slug });
      expect(await h.api.getActiveWorkspace({})).toEqual({ workspace: slug, persisted: true });
      expect(await h.api.resolveWorkspace({})).toEqual({ workspace: slug });
      expect(await h.api.resolveWorkspace({ workspace: 'default' })).toEqual({ workspace: 'default' });
      expect(await rejection(h.api.resolveWorkspace({ workspace: `${slug}-missing` }))).toMatchObject({ code: Code.NOT_FOUND, reason: 'WORKSPACE_NOT_FOUND' });
      // Names are per account: globex neither sees acme's nor is kept from making its own.
      expect(await rejection(h.api.resolveWorkspace({ workspace: slug, identity: other }))).toMatchObject({ code: Code.NOT_FOUND, reason: 'WORKSPACE_NOT_FOUND' });
      expect(await rejection(h.api.resolveWorkspace({ identity: identity('globex', 'eve', slug) }))).toMatchObject({ code: Code.NOT_FOUND });
      expect(await rejection(h.api.setActiveWorkspace({ workspace: slug, identity: other }))).toMatchObject({ code: Code.NOT_FOUND });
      expect(await h.api.getActiveWorkspace({ identity: other })).toEqual({ workspace: 'default', persisted: false });
      expect(await h.api.createWorkspace({ workspace: slug, identity: other })).toEqual({ workspace: slug, created: true });
      expect(await h.api.resolveWorkspace({ workspace: slug, identity: other })).toEqual({ workspace: slug });
    });

    it('SessionsService health - store reachable - SERVING', async () => {
      expect(await checkHealth(h.srv.address, '')).toBe(true);
      expect(await checkHealth(h.srv.address, 'liveness')).toBe(true);
    });
  });
}

describeSessionsService('the embedded SQLite file', embeddedFixture);
describeSessionsService('Redis', () => redisFixture(redis));
