import { DECOMPRESS_PAGE_CHARS } from './decompress';
import { assistant, conversation, KEY, newLog, rawLog, system, user } from './__tests__/fixtures';
import { counterIds } from './__tests__/fixtures';

async function compressed() {
  const ctx = newLog({ newId: counterIds('abcdef00-0000-4000-8000-') });
  await ctx.log.appendEvents(KEY, { events: conversation(10, 2000) });
  const res = await ctx.log.compress(KEY, { requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 24, summary: 'Summary of the first turns' }] });
  return { ...ctx, block: res.results[0]! };
}

describe('SessionLog reads', () => {
  it('never move the generation or write anything', async () => {
    const { log, store, block } = await compressed();
    const before = await rawLog(store);
    const meta = (await store.snapshot(KEY, -1))!.meta;
    await log.projectSurface(KEY, { window: { contextTokens: 1000, reservedOutputTokens: 100 }, includeRanges: true });
    await log.listCompressibleRanges(KEY);
    await log.decompress(KEY, { ref: block.blockId! });
    await log.searchContext(KEY, { query: 'uid3u' });
    await log.getStatus(KEY);
    expect((await store.snapshot(KEY, -1))!.meta).toEqual(meta);
    expect(await rawLog(store)).toEqual(before);
  });

  it('projects the window arithmetic without dropping anything', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, { events: conversation(3, 400) });
    const all = await log.projectSurface(KEY);
    const tight = await log.projectSurface(KEY, { window: { contextTokens: 200, reservedOutputTokens: 50 }, includeRanges: true });
    expect(tight.messages).toEqual(all.messages);
    expect(tight.inputBudget).toBe(150);
    expect(tight.overWindow).toBe(true);
    expect(tight.ranges).toEqual((await log.listCompressibleRanges(KEY)).ranges);
    expect(all).toMatchObject({ inputBudget: 0, overWindow: false });
    expect(all.ranges).toBeUndefined();
    await expect(log.projectSurface(KEY, { window: { contextTokens: -1, reservedOutputTokens: 0 } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(log.projectSurface(KEY, { window: { contextTokens: 10, reservedOutputTokens: 11 } })).rejects.toMatchObject({
      field: 'window.reservedOutputTokens',
    });
    await expect(log.listCompressibleRanges(KEY, { preserveRecent: -2 })).rejects.toMatchObject({ field: 'preserveRecent' });
    await expect(log.projectSurface({ ...KEY, sessionId: 'missing' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('pages Decompress by items and by a character budget, always moving forward', async () => {
    const { log, block } = await compressed();
    const first = await log.decompress(KEY, { ref: 'b1', limit: 100 });
    expect(first.total).toBe(24);
    const rendered = first.items.reduce((a, i) => a + `#${i.seq} ${i.role}: `.length + i.text.length + 1, 0);
    expect(rendered).toBeLessThanOrEqual(DECOMPRESS_PAGE_CHARS);
    expect(first.items.length).toBeLessThan(24);
    expect(first.nextOffset).toBe(first.items.length);
    // Walk every page: each original exactly once, in order.
    const seen: number[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await log.decompress(KEY, { ref: block.blockId!, offset });
      expect(page.items.length).toBeGreaterThan(0);
      seen.push(...page.items.map((i) => i.seq));
      offset = page.nextOffset;
    }
    expect(seen).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    const small = await log.decompress(KEY, { ref: 'b1', offset: 2, limit: 3 });
    expect(small.items.map((i) => i.seq)).toEqual([3, 4, 5]);
    expect(small.nextOffset).toBe(5);
  });

  it('includes an oversized first item whole rather than stalling', async () => {
    const { log } = newLog();
    const huge = 'z'.repeat(DECOMPRESS_PAGE_CHARS * 2);
    await log.appendEvents(KEY, { events: [system('s'), user(huge), assistant('a'), ...conversation(2).slice(1)] });
    await log.compress(KEY, { requestId: 'c', author: 'human', ranges: [{ startSeq: 1, endSeq: 2, summary: 'big' }] });
    const page = await log.decompress(KEY, { ref: 'b1' });
    expect(page.items.map((i) => i.seq)).toEqual([1]);
    expect(page.items[0]!.text).toBe(huge);
    expect(page.nextOffset).toBe(1);
  });

  it('clamps offset and limit instead of failing', async () => {
    const { log } = await compressed();
    const past = await log.decompress(KEY, { ref: 'b1', offset: 500 });
    expect(past).toMatchObject({ items: [], total: 24, offset: 500, nextOffset: null });
    expect(past.note).toContain('valid offsets are 0..23');
    expect((await log.decompress(KEY, { ref: 'b1', offset: -7, limit: 2 })).items.map((i) => i.seq)).toEqual([1, 2]);
    expect((await log.decompress(KEY, { ref: 'b1', offset: 'abc', limit: 'x' })).offset).toBe(0);
    expect((await log.decompress(KEY, { ref: 'b1', limit: 0 })).items).toHaveLength(1);
    expect((await log.decompress(KEY, { ref: 'b1', limit: -3 })).items).toHaveLength(1);
    expect((await log.decompress(KEY, { ref: 'b1', offset: 1e300 })).items).toEqual([]);
  });

  it('resolves refs exactly, by prefix, and refuses ambiguous or unknown ones', async () => {
    const { log, block } = await compressed();
    await log.compress(KEY, { requestId: 'c2', author: 'model', ranges: [{ startSeq: 25, endSeq: 28, summary: 'second' }] });
    expect((await log.decompress(KEY, { ref: 'b2' })).summary).toContain('second');
    expect((await log.decompress(KEY, { ref: block.blockId!.toUpperCase() })).blockId).toBe(block.blockId);
    await expect(log.decompress(KEY, { ref: 'abcdef00' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'AMBIGUOUS_PREFIX', field: 'ref' });
    await expect(log.decompress(KEY, { ref: 'b9' })).rejects.toMatchObject({ code: 'NOT_FOUND', reason: 'BLOCK_NOT_FOUND' });
    await expect(log.decompress(KEY, { ref: 'ffff' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(log.decompress(KEY, { ref: '  ' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field: 'ref' });
  });

  it('searches blocks and hidden originals, best first, with no threshold', async () => {
    const { log, block } = await compressed();
    expect((await log.searchContext(KEY, { query: '' })).hits).toEqual([]);
    expect((await log.searchContext(KEY, { query: '   \n' })).hits).toEqual([]);
    const hits = (await log.searchContext(KEY, { query: 'uid7u' })).hits;
    expect(hits[0]).toMatchObject({ kind: 'message', seq: 7, role: 'tool', blockId: block.blockId });
    expect(hits[0]!.preview.length).toBeLessThanOrEqual(160);
    expect(hits[0]!.preview.startsWith('file body uid7u')).toBe(true);
    expect(hits.length).toBe(5);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    const blockHit = (await log.searchContext(KEY, { query: 'Summary of the first turns', limit: 1 })).hits;
    expect(blockHit).toEqual([{ kind: 'block', blockId: block.blockId, score: 1, preview: expect.stringContaining('Summary of the first turns') }]);
    expect((await log.searchContext(KEY, { query: 'uid7u', limit: -1 })).hits).toHaveLength(5);
    expect((await log.searchContext(KEY, { query: 'uid7u', limit: 2 })).hits).toHaveLength(2);
    // Visible messages are not in the corpus: the surface already shows them.
    const visible = (await log.searchContext(KEY, { query: 'uid40u', limit: 50 })).hits;
    expect(visible.length).toBeGreaterThan(0);
    expect(visible.every((h) => h.kind === 'block' || h.seq! <= 24)).toBe(true);
  });

  it('finds CJK text and stemmed words', async () => {
    const { log } = newLog();
    await log.appendEvents(KEY, {
      events: [system('s'), user('上下文超窗自动恢复设计'), assistant('The tests were failing in the parser'), ...conversation(2).slice(1)],
    });
    await log.compress(KEY, { requestId: 'c', author: 'model', ranges: [{ startSeq: 1, endSeq: 2, summary: 'x' }] });
    expect((await log.searchContext(KEY, { query: '自动恢复' })).hits[0]).toMatchObject({ seq: 1 });
    expect((await log.searchContext(KEY, { query: 'failed test' })).hits[0]).toMatchObject({ seq: 2 });
  });

  it('reports status with blocks, live checkpoints, budgets and claims', async () => {
    const { log, block } = await compressed();
    await log.appendEvents(KEY, { events: conversation(6).slice(1) });
    await log.recoverOverflow(KEY, { requestId: 'r', agentId: 'zed', failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } });
    const st = await log.getStatus(KEY);
    expect(st.blocks.map((b) => b.blockId)[0]).toBe(block.blockId);
    expect(st.blocks).toHaveLength(2);
    expect(st.checkpointSeqs).toEqual(st.blocks.map((b) => b.summarySeq));
    expect(st.budgets).toEqual([{ agentId: 'zed', used: 1, max: 1 }]);
    expect(st.claims.projected).toBe(st.claims.appended - st.claims.claimed);
    expect(st.claims.projected).toBeGreaterThan(0);
    expect(st.danglingCompactions).toEqual([]);
  });
});
