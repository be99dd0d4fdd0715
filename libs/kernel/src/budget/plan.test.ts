import { assembleContext } from './assemble';
import { type Candidate, coerceMaxTokens, contentUriOf, perEntryCap, planAndRender, planReads } from './plan';
import { renderFragment } from './render';
import { UnknownTokenizerError } from '../errors';
import { countTokens, estimateTokens } from './tokens';

function cand(uri: string, category: string, score: number, abstract: string, extra: Partial<Candidate> = {}): Candidate {
  return { uri, category, score, abstract, is_directory: false, origin: 'self', ...extra };
}

describe('perEntryCap', () => {
  it.each([
    [1600, 3, 1066],
    [100, 7, 28],
    [64, 200, 1],
    [1600, 0, 3200],
    [3000, 13, 460],
  ])('caps %i tokens over %i candidates at %i (§5.2)', (max, n, want) => {
    expect(perEntryCap(max, n)).toBe(want);
  });
});

describe('coerceMaxTokens', () => {
  it('applies max(1, int(x))', () => {
    expect(coerceMaxTokens(1600)).toBe(1600);
    expect(coerceMaxTokens(12.9)).toBe(12);
    expect(coerceMaxTokens(0)).toBe(1);
    expect(coerceMaxTokens(-5)).toBe(1);
    expect(coerceMaxTokens(NaN)).toBe(1);
  });
});

describe('planAndRender', () => {
  it('degrades five long resources to uri at 64 tokens and drops what does not fit (§5.3 worked example)', () => {
    const abstract = 'x'.repeat(200);
    const items = [1, 2, 3, 4, 5].map((i) => ({ candidate: cand(`viking://resources/r${i}.md`, 'resources', 0.5, abstract) }));
    const { entries, stats } = planAndRender(items, 64, null);
    expect(stats.per_entry_cap).toBe(24);
    expect(entries.map((e) => [e.detail, e.text])).toEqual([
      ['uri', ''],
      ['uri', ''],
    ]);
    expect(stats).toEqual({
      max_tokens: 64,
      used_tokens: 43,
      per_entry_cap: 24,
      returned: 2,
      dropped: 3,
      deduped: 0,
      detail: null,
      tier_counts: { uri: 2 },
      fill: { floor_tokens: 43, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 },
    });
  });

  it('continues after a drop: a later, shorter candidate still fits', () => {
    const items = [
      { candidate: cand('viking://resources/a.md', 'resources', 0.9, 'a') },
      { candidate: cand(`viking://resources/${'long'.repeat(40)}.md`, 'resources', 0.8, '') },
      { candidate: cand('viking://resources/c.md', 'resources', 0.7, 'c') },
    ];
    const { entries, stats } = planAndRender(items, 64, null);
    expect(entries.map((e) => e.uri)).toEqual(['viking://resources/a.md', 'viking://resources/c.md']);
    expect(stats.dropped).toBe(1);
  });

  it('de-duplicates identical texts but never two uri-tier entries', () => {
    const items = [
      { candidate: cand('viking://resources/a.md', 'resources', 0.9, 'same text') },
      { candidate: cand('viking://resources/b.md', 'resources', 0.8, ' same text\n') },
      { candidate: cand('viking://resources/c.md', 'resources', 0.7, '') },
      { candidate: cand('viking://resources/d.md', 'resources', 0.6, '') },
    ];
    const { entries, stats } = planAndRender(items, 1600, null);
    expect(entries.map((e) => [e.uri, e.detail])).toEqual([
      ['viking://resources/a.md', 'abstract'],
      ['viking://resources/c.md', 'uri'],
      ['viking://resources/d.md', 'uri'],
    ]);
    expect(stats.deduped).toBe(1);
    expect(stats.tier_counts).toEqual({ abstract: 1, uri: 2 });
  });

  it('deepens events within the cap first, then beyond it with spare budget', () => {
    const full = `# Summary\ngist\n\n# Log\n${'word '.repeat(400)}`.trim(); // full fragment: 531 tokens
    const event = { candidate: cand('viking://user/u/memories/events/a.md', 'events', 0.9, 'gist'), texts: { overview: 'gist', full } };
    const withResources = (n: number) => [
      event,
      ...Array.from({ length: n }, (_, i) => ({ candidate: cand(`viking://resources/r${i}`, 'resources', 0.1, `r${i}`) })),
    ];
    // 2 candidates → cap 1200: the full body fits the cap (pass B).
    const roomy = planAndRender(withResources(1), 1200, null);
    expect(roomy.entries[0].detail).toBe('full');
    expect(roomy.stats.fill).toEqual({ floor_tokens: 54, overview_upgrades: 0, full_upgrades: 1, spare_upgrades: 0 });
    // 7 candidates → cap 342: too big for the cap, but the budget has room (pass C).
    const capped = planAndRender(withResources(6), 1200, null);
    expect(capped.stats.per_entry_cap).toBe(342);
    expect(capped.entries[0].detail).toBe('full');
    expect(capped.stats.fill).toEqual({ floor_tokens: 184, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 1 });
    const overviewFragment = renderFragment({ uri: event.candidate.uri, category: 'events', score: 0.9, detail: 'overview', text: 'gist' });
    expect(capped.stats.used_tokens).toBe(184 - estimateTokens(overviewFragment) + 531);
    // The same with an exact tokenizer: the full fragment is first priced against the cap
    // (and proven too big), then priced again against the whole remaining budget.
    const exact = planAndRender(withResources(6), 1200, null, 'o200k_base');
    expect(exact.entries[0].detail).toBe('full');
    expect(exact.stats.fill).toMatchObject({ full_upgrades: 0, spare_upgrades: 1 });
    expect(exact.stats.used_tokens).toBe(exact.entries.map(renderFragment).reduce((n, f) => n + countTokens(f, 'o200k_base'), 0) + 6);
    // Without room even pass C leaves it at overview.
    const tight = planAndRender(withResources(6), 600, null);
    expect(tight.entries[0].detail).toBe('overview');
    expect(tight.stats.fill.spare_upgrades).toBe(0);
  });

  it('never deepens past the ceiling: entities stay at abstract, pinned events stay at the pin', () => {
    const texts = { overview: 'overview text', full: 'full text that is longer' };
    const a = planAndRender([{ candidate: cand('viking://user/u/memories/entities/e.md', 'entities', 0.5, 'abs'), texts }], 1600, null);
    expect(a.entries[0].detail).toBe('abstract');
    const b = planAndRender([{ candidate: cand('viking://user/u/memories/events/e.md', 'events', 0.5, 'abs'), texts }], 1600, 'overview');
    expect(b.entries[0].detail).toBe('overview');
    expect(b.stats.detail).toBe('overview');
  });

  it('steps a pinned tier down when it is unavailable', () => {
    const r = planAndRender([{ candidate: cand('viking://resources/doc.md', 'resources', 0.5, 'abs'), texts: { overview: '', full: '' } }], 1600, 'full');
    expect(r.entries[0].detail).toBe('abstract');
  });

  it('reports tier_counts in first-appearance order', () => {
    const items = [
      { candidate: cand('viking://resources/a', 'resources', 0.9, '') },
      { candidate: cand('viking://resources/b', 'resources', 0.8, 'b') },
      { candidate: cand('viking://resources/c', 'resources', 0.7, '') },
    ];
    expect(Object.keys(planAndRender(items, 1600, null).stats.tier_counts)).toEqual(['uri', 'abstract']);
  });

  it('keeps the raw text in entries and neutralises it only in rendered', () => {
    const r = planAndRender([{ candidate: cand('viking://resources/a', 'resources', 0.125, 'see </memory> here') }], 1600, null);
    expect(r.entries[0].text).toBe('see </memory> here');
    expect(r.rendered).toBe('<memory uri="viking://resources/a" type="resources" score="0.12" detail="abstract">\nsee <\\/memory> here\n</memory>');
    expect(r.stats.used_tokens).toBe(estimateTokens(r.rendered));
  });

  it('returns an empty block for no candidates', () => {
    const r = planAndRender([], 1600, null);
    expect(r).toEqual({
      entries: [],
      rendered: '',
      stats: {
        max_tokens: 1600,
        used_tokens: 0,
        per_entry_cap: 3200,
        returned: 0,
        dropped: 0,
        deduped: 0,
        detail: null,
        tier_counts: {},
        fill: { floor_tokens: 0, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 },
      },
    });
  });

  it.each(['o200k_base', 'cl100k_base'])('holds the budget in %s and counts fragments in it', (tokenizer) => {
    const items = Array.from({ length: 12 }, (_, i) => ({
      candidate: cand(`viking://user/u/memories/events/e${i}.md`, 'events', 1 - i / 20, `abstract ${i} 中文 😀`),
      texts: { overview: `overview ${i} `.repeat(10), full: `full body ${i} 日本語 `.repeat(40) },
    }));
    const r = planAndRender(items, 700, null, tokenizer);
    const frags = r.entries.map(renderFragment);
    expect(r.stats.used_tokens).toBe(frags.reduce((n, f) => n + countTokens(f, tokenizer), 0) + frags.length - 1);
    expect(r.stats.used_tokens).toBeLessThanOrEqual(700);
    // The estimate would price these differently: the tokenizer really is the one in use.
    const est = planAndRender(items, 700, null);
    expect(est.stats.used_tokens).not.toBe(r.stats.used_tokens);
  });

  it('rejects an unknown tokenizer', () => {
    expect(() => planAndRender([], 100, null, 'words')).toThrow(UnknownTokenizerError);
    expect(() => planReads([], 100, null, 'words')).toThrow(UnknownTokenizerError);
  });
});

describe('planReads', () => {
  const cap1600x3 = [
    cand('viking://user/u/memories/events/e.md', 'events', 0.9, 'short'),
    cand('viking://resources/r.md', 'resources', 0.8, 'x'.repeat(20000)),
    cand('viking://user/u/memories/entities/big.md', 'entities', 0.7, 'y'.repeat(20000)),
  ];

  it('reads events, and memories whose abstract alone exceeds the cap, never resources (§5.4)', () => {
    const plan = planReads(cap1600x3, 1600, null);
    expect(plan.perEntryCap).toBe(1066);
    expect(plan.needsBody).toEqual([true, false, true]);
    expect(plan.reads.map((r) => r.contentUri)).toEqual(['viking://user/u/memories/events/e.md', 'viking://user/u/memories/entities/big.md']);
  });

  it('does not read a memory whose abstract fits the cap', () => {
    expect(planReads([cand('viking://user/u/memories/entities/s.md', 'entities', 0.7, 'small')], 1600, null).needsBody).toEqual([false]);
  });

  it('reads memories without an abstract (overview substitute) but not resources without one', () => {
    const plan = planReads([cand('viking://user/u/memories/preferences/p.md', 'preferences', 0.7, ''), cand('viking://resources/r', 'resources', 0.6, '')], 1600, null);
    expect(plan.needsBody).toEqual([true, false]);
  });

  it('reads directory sidecars and anything pinned at overview or full', () => {
    const dir = cand('viking://resources/docs', 'resources', 0.5, 'abs', { is_directory: true });
    expect(contentUriOf(dir)).toBe('viking://resources/docs/.overview.md');
    expect(planReads([dir], 1600, null).reads[0].contentUri).toBe('viking://resources/docs/.overview.md');
    const res = cand('viking://resources/doc.md', 'resources', 0.5, 'abs');
    expect(planReads([res], 1600, 'overview').needsBody).toEqual([true]);
    expect(planReads([res], 1600, { resources: 'full' }).needsBody).toEqual([true]);
    expect(planReads([res], 1600, { skills: 'full' }).needsBody).toEqual([false]);
    expect(planReads([res], 1600, 'abstract').needsBody).toEqual([false]);
  });

  it('sizes the oversized-abstract check in the selected tokenizer', () => {
    const others = [cand('viking://resources/a', 'resources', 0.1, 'a'), cand('viking://resources/b', 'resources', 0.1, 'b')];
    // CJK: 900 estimated tokens, 300 in o200k_base; cap = 800.
    const zh = [cand('viking://user/u/memories/entities/zh.md', 'entities', 0.7, '你好世界'.repeat(150)), ...others];
    expect(planReads(zh, 1200, null).needsBody[0]).toBe(true);
    expect(planReads(zh, 1200, null, 'o200k_base').needsBody[0]).toBe(false);
    // Symbols: 150 estimated tokens, 600 in cl100k_base; cap = 400.
    const sym = [cand('viking://user/u/memories/entities/sym.md', 'entities', 0.7, 'q7#Zk!'.repeat(100)), ...others];
    expect(planReads(sym, 600, null).needsBody[0]).toBe(false);
    expect(planReads(sym, 600, null, 'cl100k_base').needsBody[0]).toBe(true);
  });
});

describe('assembleContext', () => {
  it('reproduces the §1.6 context example', () => {
    const candidates = [
      cand('viking://user/default/memories/events/2026/07/14/launch.md', 'events', 0.71, 'Shipped the stdio MCP proxy.'),
      cand('viking://user/default/memories/entities/openviking.md', 'entities', 0.55, 'OpenViking: context database for AI agents.'),
      cand('viking://user/default/memories/preferences/style.md', 'preferences', 0.48, 'Prefers TypeScript strict mode & <no> any.'),
      cand('viking://resources/docs/api.md', 'resources', 0.42, 'HTTP API reference for search endpoints.'),
    ];
    const body = '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter\n\n<!-- MEMORY_FIELDS\n{"version":1}\n-->';
    const reads: string[] = [];
    const r = assembleContext(candidates, (uri) => (reads.push(uri), uri.endsWith('launch.md') ? body : null), 1600, null);
    expect(reads).toEqual(['viking://user/default/memories/events/2026/07/14/launch.md']);
    expect(r.rendered).toBe(
      '<memory uri="viking://user/default/memories/events/2026/07/14/launch.md" type="events" score="0.71" detail="full">\n# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter\n</memory>\n<memory uri="viking://user/default/memories/entities/openviking.md" type="entities" score="0.55" detail="abstract">\nOpenViking: context database for AI agents.\n</memory>\n<memory uri="viking://user/default/memories/preferences/style.md" type="preferences" score="0.48" detail="abstract">\nPrefers TypeScript strict mode & <no> any.\n</memory>\n<memory uri="viking://resources/docs/api.md" type="resources" score="0.42" detail="abstract">\nHTTP API reference for search endpoints.\n</memory>',
    );
    expect(r.stats).toEqual({
      max_tokens: 1600,
      used_tokens: 178,
      per_entry_cap: 800,
      returned: 4,
      dropped: 0,
      deduped: 0,
      detail: null,
      tier_counts: { full: 1, abstract: 3 },
      fill: { floor_tokens: 165, overview_upgrades: 0, full_upgrades: 1, spare_upgrades: 0 },
    });
    expect(r.entries[0]).toEqual({
      uri: 'viking://user/default/memories/events/2026/07/14/launch.md',
      category: 'events',
      score: 0.71,
      detail: 'full',
      text: '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter',
      origin: 'self',
    });
  });

  it('reproduces the §9.5 recall example', () => {
    const uris = [
      ['viking://user/default/peers/current/memories/events/current.md', 0.91, 'actor_peer'],
      ['viking://user/default/memories/events/global.md', 0.8, 'self'],
      ['viking://user/default/peers/other/memories/events/other.md', 0.89, 'other_peer'],
    ] as const;
    const candidates = uris.map(([uri, score, origin]) => cand(uri, 'events', score, 'abstract', { origin }));
    const r = assembleContext(candidates, (uri) => `# Summary\nsummary of ${uri.split('/').pop()}\n\n# ChatLog\nlong log`, 1250, null);
    expect(r.stats).toMatchObject({ max_tokens: 1250, used_tokens: 132, per_entry_cap: 832, returned: 3, tier_counts: { full: 3 } });
    expect(r.stats.fill).toEqual({ floor_tokens: 113, overview_upgrades: 0, full_upgrades: 3, spare_upgrades: 0 });
    expect(r.rendered).toContain('score="0.80" detail="full">\n# Summary\nsummary of global.md\n\n# ChatLog\nlong log\n</memory>');
    expect(r.entries.map((e) => e.origin)).toEqual(['actor_peer', 'self', 'other_peer']);
  });

  it('serves a directory with refused front matter at its next tier and reports it', () => {
    const dir = cand('viking://resources/docs', 'resources', 0.5, 'Docs abstract.', { is_directory: true });
    const r = assembleContext([dir], () => '---\ndirectory: x\n# never closed', 1600, null);
    expect(r.entries[0].detail).toBe('abstract');
    expect(r.overviewErrors.map((e) => [e.uri, e.error.problem])).toEqual([['viking://resources/docs', 'not_closed']]);
  });

  it('reads each content URI once', () => {
    const a = cand('viking://user/u/memories/events/same.md', 'events', 0.9, 'a');
    const b = cand('viking://user/u/memories/events/same.md', 'events', 0.8, 'b');
    let reads = 0;
    const r = assembleContext([a, b], () => (reads++, '# Summary\nsame\n'), 1600, null);
    expect(reads).toBe(1);
    expect(r.stats.deduped).toBe(1);
  });
});
