import { UnknownTokenizerError } from '@ctxmesh/kernel';
import { readTiers, type BodyReader, type TierCandidate } from './tiers';

const U = 'viking://user/alice';

function cand(uri: string, category: string, over: Partial<TierCandidate> = {}): TierCandidate {
  return { uri, category, abstract: `abstract of ${uri}`, isDirectory: false, openContext: false, score: 0.5, ...over };
}

/** A body reader over a table, recording every call. */
function reader(table: Record<string, string>) {
  const calls: Array<{ uris: string[]; open: boolean }> = [];
  const fn: BodyReader = async (uris, open) => {
    calls.push({ uris, open });
    return uris.map((u) => table[u] ?? null);
  };
  return { fn, calls };
}

const EVENT = `${U}/memories/events/launch.md`;
const EVENT_BODY = '# Summary\nShipped the proxy.\n\n# ChatLog:\nchatter\n<!-- MEMORY_FIELDS {"a":1} -->';

describe('readTiers', () => {
  it('reads only what §5.4 needs with default tiers: events and directory sidecars', async () => {
    const r = reader({ [EVENT]: EVENT_BODY, 'viking://resources/docs/.overview.md': '# Docs\nAll the docs.' });
    const res = await readTiers(
      {
        candidates: [
          cand(EVENT, 'events'),
          cand(`${U}/memories/entities/e.md`, 'entities'),
          cand('viking://resources/a.md', 'resources'),
          cand('viking://agent/skills/s.md', 'skills'),
          cand('viking://resources/docs', 'resources', { isDirectory: true }),
        ],
        maxTokens: 1600,
        detail: null,
        outliner: null,
      },
      r.fn,
    );
    expect(r.calls).toEqual([{ uris: [EVENT, 'viking://resources/docs/.overview.md'], open: false }]);
    expect(res.reads).toBe(2);
    expect(res.items.map((i) => i.read)).toEqual([true, false, false, false, true]);
    expect(res.items[0]).toEqual({ read: true, overview: 'Shipped the proxy.', full: '# Summary\nShipped the proxy.\n\n# ChatLog:\nchatter', note: '' });
    expect(res.items[4]).toEqual({ read: true, overview: '# Docs\nAll the docs.', full: '', note: '' });
    expect(res.items[1]).toEqual({ read: false, overview: '', full: '', note: '' });
  });

  it('reads pinned candidates, and memory candidates whose abstract alone exceeds the cap', async () => {
    const long = 'x'.repeat(6000); // 1500 tokens > the cap floor(1600 / 3) · 2 = 1066
    const r = reader({});
    await readTiers(
      {
        candidates: [cand('viking://resources/a.md', 'resources'), cand(`${U}/memories/entities/big.md`, 'entities', { abstract: long }), cand(`${U}/memories/entities/small.md`, 'entities')],
        maxTokens: 1600,
        detail: { resources: 'full' },
        outliner: null,
      },
      r.fn,
    );
    expect(r.calls.flatMap((c) => c.uris)).toEqual(['viking://resources/a.md', `${U}/memories/entities/big.md`]);
  });

  it('never reads resources or skills with oversized or missing abstracts', async () => {
    const r = reader({});
    const res = await readTiers(
      { candidates: [cand('viking://resources/a.md', 'resources', { abstract: 'y'.repeat(9000) }), cand('viking://agent/skills/s.md', 'skills', { abstract: '' })], maxTokens: 64, detail: null, outliner: null },
      r.fn,
    );
    expect(r.calls).toEqual([]);
    expect(res.reads).toBe(0);
  });

  it('reads each content URI once per read context, the open context separately', async () => {
    const peer = `${U}/peers/bob/memories/events/b.md`;
    const r = reader({ [EVENT]: EVENT_BODY, [peer]: 'Bob body' });
    const res = await readTiers(
      {
        candidates: [cand(EVENT, 'events'), cand(EVENT, 'events', { score: 0.4 }), cand(peer, 'events', { openContext: true })],
        maxTokens: 1600,
        detail: null,
        outliner: null,
      },
      r.fn,
    );
    expect(r.calls).toEqual([
      { uris: [EVENT], open: false },
      { uris: [peer], open: true },
    ]);
    expect(res.reads).toBe(2);
    expect(res.items[1]).toEqual(res.items[0]);
    expect(res.items[2]).toMatchObject({ read: true, full: 'Bob body' });
  });

  it('splits reads into batches and keeps at most `concurrency` store calls in flight', async () => {
    const uris = Array.from({ length: 40 }, (_, i) => `${U}/memories/events/e${i}.md`);
    let inFlight = 0;
    let peak = 0;
    const calls: string[][] = [];
    const fn: BodyReader = async (batch) => {
      calls.push(batch);
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return batch.map((u) => `body ${u}`);
    };
    const res = await readTiers({ candidates: uris.map((u) => cand(u, 'events')), maxTokens: 1600, detail: null, outliner: null }, fn, { concurrency: 2, batchSize: 3 });
    expect(calls.map((c) => c.length)).toEqual([...Array(13).fill(3), 1]);
    expect(peak).toBe(2);
    expect(res.items.every((i) => i.read)).toBe(true);
    expect(res.reads).toBe(40);
  });

  it('marks missing bodies not_found and failed reads read_failed, never throwing', async () => {
    const failing: BodyReader = async (uris, open) => {
      if (open) throw new Error('store down');
      return uris.map(() => null);
    };
    const res = await readTiers(
      { candidates: [cand(EVENT, 'events'), cand(`${U}/peers/x/memories/events/p.md`, 'events', { openContext: true })], maxTokens: 1600, detail: null, outliner: null },
      failing,
    );
    expect(res.items).toEqual([
      { read: false, overview: '', full: '', note: 'not_found' },
      { read: false, overview: '', full: '', note: 'read_failed' },
    ]);
  });

  it('reports a refused directory front matter as bad_front_matter with no overview', async () => {
    const r = reader({ 'viking://resources/d/.overview.md': '---\ntitle: no directory key\n---\nBody' });
    const res = await readTiers({ candidates: [cand('viking://resources/d', 'resources', { isDirectory: true })], maxTokens: 1600, detail: null, outliner: null }, r.fn);
    expect(res.items[0]).toEqual({ read: true, overview: '', full: '', note: 'bad_front_matter' });
  });

  it('uses the outliner for code files only when given one', async () => {
    const code = 'viking://resources/src/app.ts';
    const r = reader({ [code]: 'export function main() {}\n' });
    const outliner = (name: string) => (name.endsWith('.ts') ? `# ${name} [aider-repomap-lite, compact]\nfunction main()` : '');
    const input = { candidates: [cand(code, 'resources')], maxTokens: 1600, detail: 'overview', outliner };
    const withIt = await readTiers(input, r.fn);
    expect(withIt.items[0].overview).toBe('# app.ts [aider-repomap-lite, compact]\nfunction main()');
    const without = await readTiers({ ...input, outliner: null }, r.fn);
    expect(without.items[0].overview).toBe('export function main() {}');
  });

  it('rejects an unknown tokenizer', async () => {
    await expect(readTiers({ candidates: [], maxTokens: 10, detail: null, tokenizer: 'gpt-17', outliner: null }, reader({}).fn)).rejects.toBeInstanceOf(UnknownTokenizerError);
  });
});
