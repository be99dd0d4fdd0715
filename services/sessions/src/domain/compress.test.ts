import { SUMMARY_FRAME_PREFIX, overflowMarkerSummary } from './text';
import { assistant, assistantCalls, call, conversation, instructions, KEY, newLog, parsedLog, rawLog, result, system, user } from './__tests__/fixtures';
import type { CompressInput } from './inputs';

const compressReq = (ranges: CompressInput['ranges'], extra: Partial<CompressInput> = {}): CompressInput => ({
  requestId: `req-${JSON.stringify(ranges).length}-${Math.random()}`,
  author: 'model',
  route: { provider: 'p', model: 'm' },
  ranges,
  ...extra,
});

async function seeded(turns = 6) {
  const ctx = newLog();
  await ctx.log.appendEvents(KEY, { events: conversation(turns) });
  return ctx;
}

describe('SessionLog.compress', () => {
  it('lands a framed model summary in one atomic transaction', async () => {
    const { log, store } = await seeded();
    const before = await rawLog(store);
    const res = await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 8, summary: 'Read two files; nothing to fix.', topic: 'reading' }]));
    expect(res.generation).toBe(1);
    const [r] = res.results;
    expect(r).toMatchObject({ status: 'landed', start: 1, end: 8, shadowedSeqs: [1, 2, 3, 4, 5, 6, 7, 8], tier: 1, kernelRef: 'b1', adjusted: false, recovered: false });
    const events = await parsedLog(store);
    const added = events.slice(before.length);
    expect(added.map((e) => e.type)).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']);
    const summary = added[1] as { summary: string; shadowedSeqs: number[]; shadowedTokenCount: number; estimatorId: string; author: string };
    expect(summary.summary).toBe(`${SUMMARY_FRAME_PREFIX}\nRead two files; nothing to fix.`);
    expect(summary.estimatorId).toBe('ctxmesh-claim-v1');
    expect(summary.shadowedTokenCount).toBe(r!.claimTokens);
    expect((added[2] as { sourceEventSeqs: number[] }).sourceEventSeqs).toEqual(summary.shadowedSeqs);
    // Projected, stored and Decompress bytes agree, and the frame appears exactly once.
    const node = (await log.projectSurface(KEY)).messages.find((m) => m.class === 'checkpoint')!;
    expect(node.text).toBe(summary.summary);
    expect(node.text.split(SUMMARY_FRAME_PREFIX)).toHaveLength(2);
    expect((await log.decompress(KEY, { ref: 'b1' })).summary).toBe(summary.summary);
    // Claims never drive the projected total negative.
    const { claims } = await log.getStatus(KEY);
    expect(claims.projected).toBeGreaterThanOrEqual(0);
    expect(claims.claimed).toBe(summary.shadowedTokenCount);
  });

  it('frames a summary that already carries the frame only once, and human summaries too', async () => {
    const { log } = await seeded();
    await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 4, summary: `${SUMMARY_FRAME_PREFIX}\nalready framed` }]));
    await log.compress(KEY, compressReq([{ startSeq: 5, endSeq: 8, summary: 'by a human' }], { author: 'human' }));
    const texts = (await log.projectSurface(KEY)).messages.filter((m) => m.class === 'checkpoint').map((m) => m.text);
    expect(texts).toEqual([`${SUMMARY_FRAME_PREFIX}\nalready framed`, `${SUMMARY_FRAME_PREFIX}\nby a human`]);
  });

  it('moves edges that would split a tool pair and reports adjusted', async () => {
    const { log } = await seeded();
    // 3 is the result of the call at 2; ending at 2 would strand the call.
    const [r] = (await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 2, summary: 's' }]))).results;
    expect(r).toMatchObject({ status: 'landed', start: 1, end: 1, adjusted: true });
    const [r2] = (await log.compress(KEY, compressReq([{ startSeq: 3, endSeq: 3, summary: 's' }]))).results;
    // A lone result expands to its call.
    expect(r2).toMatchObject({ status: 'landed', start: 2, end: 3, adjusted: true });
  });

  it('answers already_compressed with the covering block and writes nothing', async () => {
    const { log, store } = await seeded();
    const [landed] = (await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 8, summary: 's' }]))).results;
    const before = await rawLog(store);
    const res = await log.compress(KEY, compressReq([{ startSeq: 2, endSeq: 6, summary: 's2' }]));
    expect(res.results[0]).toMatchObject({ status: 'already_compressed', coveringBlockIds: [landed!.blockId] });
    expect(res.generation).toBe(1);
    expect(await rawLog(store)).toEqual(before);
  });

  it('recovers a partly stale range onto its live nodes', async () => {
    const { log } = await seeded();
    await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 4, summary: 's' }]));
    const [r] = (await log.compress(KEY, compressReq([{ startSeq: 3, endSeq: 8, summary: 's2' }]))).results;
    expect(r).toMatchObject({ status: 'landed', start: 5, end: 8, recovered: true, adjusted: true });
  });

  it('answers guarded with the slices still compressible, writing nothing for that range', async () => {
    const { log, store } = await seeded();
    const before = await rawLog(store);
    // The protected tail (last five nodes) and the last real user turn (21) are guarded.
    const tail = await log.compress(KEY, compressReq([{ startSeq: 13, endSeq: 24, summary: 's' }]));
    expect(tail.results[0]!.status).toBe('guarded');
    expect(tail.results[0]!.guardedSeqs).toEqual([20, 21, 22, 23, 24]);
    expect(tail.results[0]!.compressible!.map((c) => [c.start, c.end])).toEqual([[13, 19]]);
    expect(tail.results[0]!.detail).toContain('21 (recent, last-user-turn)');
    expect(tail.generation).toBe(0);
    expect(await rawLog(store)).toEqual(before);
  });

  it('guards the last real user turn outside the tail, and a system node in the middle', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, {
      events: [
        system('s'),
        user('old question'),
        assistant('old answer'),
        system('a second system prompt'),
        user('the last real question'),
        assistant('a1'),
        user('runtime snapshot', { kind: 'runtime-context' }),
        assistant('a2'),
        assistant('a3'),
        assistant('a4'),
        assistant('a5'),
        assistant('a6'),
      ],
    });
    const res = await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 6, summary: 's' }]));
    expect(res.results[0]).toMatchObject({ status: 'guarded', guardedSeqs: [3, 4] });
    expect(res.results[0]!.compressible!.map((c) => [c.start, c.end])).toEqual([
      [1, 2],
      [5, 6],
    ]);
  });

  it('guards the current instruction row but lets a stale copy go', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, {
      events: [system('s'), instructions('repo', 'AGENTS v1'), user('q1'), assistant('a1'), instructions('repo', 'AGENTS v2'), user('q2'), assistant('a2'), ...conversation(2).slice(1)],
    });
    const cur = await log.compress(KEY, compressReq([{ startSeq: 4, endSeq: 6, summary: 's' }]));
    expect(cur.results[0]).toMatchObject({ status: 'guarded', guardedSeqs: [4] });
    const stale = await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 3, summary: 's' }]));
    expect(stale.results[0]).toMatchObject({ status: 'landed', shadowedSeqs: [1, 2, 3] });
  });

  it('answers unbalanced for a call still waiting for its result', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: [...conversation(3), user('go'), assistantCalls('', call('pending'))] });
    const head = (await log.getStatus(KEY)).head;
    const res = await log.compress(KEY, compressReq([{ startSeq: head, endSeq: head, summary: 's' }]));
    expect(res.results[0]!.status).toBe('unbalanced');
  });

  it('answers unknown_seq for a window with no message in it', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: [system('s'), { type: 'turn/start', turn: 1 }, { type: 'turn/end', turn: 1 }, ...conversation(3).slice(1)] });
    const res = await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 2, summary: 's' }]));
    expect(res.results[0]!.status).toBe('unknown_seq');
  });

  it('distils a checkpoint edge into a tier-2 block whose originals expand', async () => {
    const { log } = await seeded(8);
    const [b1] = (await log.compress(KEY, compressReq([{ startSeq: 5, endSeq: 8, summary: 'first' }]))).results;
    const cp = (await log.getStatus(KEY)).checkpointSeqs[0]!;
    // With two live plain edges, a checkpoint inside the span is guarded.
    const plain = await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 12, summary: 'x' }]));
    expect(plain.results[0]).toMatchObject({ status: 'guarded', guardedSeqs: [cp] });
    expect(plain.results[0]!.compressible!.map((c) => [c.start, c.end])).toEqual([
      [1, 4],
      [9, 12],
    ]);
    // A checkpoint edge makes it an explicit distillation.
    const [b2] = (await log.compress(KEY, compressReq([{ startSeq: cp, endSeq: 12, summary: 'second' }]))).results;
    expect(b2).toMatchObject({ status: 'landed', tier: 2, start: cp, end: 12, shadowedSeqs: [cp, 9, 10, 11, 12] });
    const status = await log.getStatus(KEY);
    expect(status.blocks.map((b) => [b.blockId, b.active])).toEqual([
      [b1!.blockId, false],
      [b2!.blockId, true],
    ]);
    const page = await log.decompress(KEY, { ref: 'b2' });
    expect(page.items.map((i) => i.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    expect(page.tier).toBe(2);
    // Hidden originals are owned by the earliest block covering them.
    const hit = (await log.searchContext(KEY, { query: 'uid6u' })).hits[0]!;
    expect(hit).toMatchObject({ kind: 'message', seq: 6, blockId: b1!.blockId });
  });

  it('lands several ranges in one call and reports each', async () => {
    const { log, store } = await seeded(8);
    const before = (await rawLog(store)).length;
    const res = await log.compress(
      KEY,
      compressReq([
        { startSeq: 1, endSeq: 4, summary: 'a' },
        { startSeq: 30, endSeq: 32, summary: 'b' },
        { startSeq: 5, endSeq: 8, summary: 'c' },
      ]),
    );
    expect(res.results.map((r) => r.status)).toEqual(['landed', 'guarded', 'landed']);
    expect(res.generation).toBe(2);
    expect((await rawLog(store)).length).toBe(before + 8);
  });

  it('returns the cached response for a repeated requestId', async () => {
    const { log, store } = await seeded();
    const req = compressReq([{ startSeq: 1, endSeq: 4, summary: 's' }], { requestId: 'same' });
    const first = await log.compress(KEY, req);
    const after = await rawLog(store);
    expect(await log.compress(KEY, req)).toEqual(first);
    expect(await rawLog(store)).toEqual(after);
    await expect(
      log.recoverOverflow(KEY, { requestId: 'same', agentId: 'a', failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'REQUEST_ID_REUSED' });
  });

  it('refuses a stale expectedGeneration with ABORTED and the current generation', async () => {
    const { log } = await seeded();
    await log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 4, summary: 's' }]));
    await expect(log.compress(KEY, compressReq([{ startSeq: 5, endSeq: 8, summary: 's' }], { expectedGeneration: 0 }))).rejects.toMatchObject({
      name: 'ConflictError',
      code: 'ABORTED',
      reason: 'STALE_EXPECTED_GENERATION',
      generation: 1,
    });
    expect((await log.compress(KEY, compressReq([{ startSeq: 5, endSeq: 8, summary: 's' }], { expectedGeneration: 1 }))).generation).toBe(2);
  });

  describe('bad input (INVALID_ARGUMENT, nothing written)', () => {
    const cases: Array<{ name: string; patch: Partial<CompressInput>; field: string; reason?: string }> = [
      { name: 'reversed range', patch: { ranges: [{ startSeq: 8, endSeq: 1, summary: 's' }] }, field: 'ranges[0]', reason: 'REVERSED_RANGE' },
      { name: 'negative seq', patch: { ranges: [{ startSeq: -1, endSeq: 1, summary: 's' }] }, field: 'ranges[0].startSeq' },
      { name: 'fractional seq', patch: { ranges: [{ startSeq: 1, endSeq: 2.5, summary: 's' }] }, field: 'ranges[0].endSeq' },
      { name: 'non-numeric seq', patch: { ranges: [{ startSeq: 'abc', endSeq: 2, summary: 's' }] }, field: 'ranges[0].startSeq' },
      { name: 'seq not in the log', patch: { ranges: [{ startSeq: 1, endSeq: 999, summary: 's' }] }, field: 'ranges[0].endSeq', reason: 'SEQ_NOT_IN_LOG' },
      { name: 'blank summary', patch: { ranges: [{ startSeq: 1, endSeq: 2, summary: '   ' }] }, field: 'ranges[0].summary' },
      { name: 'missing summary', patch: { ranges: [{ startSeq: 1, endSeq: 2 }] }, field: 'ranges[0].summary' },
      { name: 'missing start', patch: { ranges: [{ endSeq: 2, summary: 's' }] }, field: 'ranges[0].startSeq' },
      { name: 'missing end in the second range', patch: { ranges: [{ startSeq: 1, endSeq: 2, summary: 's' }, { startSeq: 3, summary: 's' }] }, field: 'ranges[1].endSeq' },
      {
        name: 'summary spoofing the engine lead',
        patch: { ranges: [{ startSeq: 1, endSeq: 2, summary: overflowMarkerSummary(2) }] },
        field: 'ranges[0].summary',
        reason: 'RESERVED_SUMMARY_LEAD',
      },
      { name: 'no ranges', patch: { ranges: [] }, field: 'ranges' },
      { name: 'bad author', patch: { author: 'robot' }, field: 'author' },
      { name: 'missing requestId', patch: { requestId: '' }, field: 'requestId' },
    ];
    it.each(cases)('$name', async ({ patch, field, reason }) => {
      const { log, store } = await seeded();
      const before = await rawLog(store);
      const req = { ...compressReq([{ startSeq: 1, endSeq: 4, summary: 's' }]), ...patch };
      await expect(log.compress(KEY, req)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field, ...(reason ? { reason } : {}) });
      expect(await rawLog(store)).toEqual(before);
    });

    it('accepts "295" and "295#callId" edges', async () => {
      const { log } = await seeded();
      const [r] = (await log.compress(KEY, compressReq([{ startSeq: '1', endSeq: '2#c0', summary: 's' }]))).results;
      expect(r).toMatchObject({ status: 'landed', start: 1, end: 1 });
    });

    it('answers NOT_FOUND for an unknown session', async () => {
      const { log } = newLog();
      await expect(log.compress(KEY, compressReq([{ startSeq: 1, endSeq: 2, summary: 's' }]))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });

  it('keeps tool pairing intact on the surface after compaction', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, {
      events: [system('s'), user('q'), assistantCalls('two calls', call('x'), call('y')), result('x', 'rx'), result('y', 'ry'), assistant('done'), ...conversation(2).slice(1)],
    });
    // Ending inside the pair group is resolved to a balanced cut.
    const [r] = (await log.compress(KEY, compressReq([{ startSeq: 2, endSeq: 3, summary: 's' }]))).results;
    expect(r).toMatchObject({ status: 'landed', start: 2, end: 4 });
  });
});
