import { buildDigestPrompt, buildExpansionPrompt, buildQueryRewritePrompt, digestContext, EXPANSION_MESSAGE_CHARS } from './prompts';

describe('buildExpansionPrompt', () => {
  const messages = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', text: `m${i}` }));

  it('shows the last five messages oldest first, the overview and the query, and asks for JSON', () => {
    const [system, user] = buildExpansionPrompt('fix it', messages, 'Earlier: payments deploy.');
    expect(system.role).toBe('system');
    expect(user.role).toBe('user');
    const convo = user.content.split('Recent messages (oldest first):\n')[1].split('\n\n')[0];
    expect(convo).toBe('[assistant] m3\n[user] m4\n[assistant] m5\n[user] m6\n[assistant] m7');
    expect(user.content).toContain('Summary of the earlier session:\nEarlier: payments deploy.');
    expect(user.content).toContain('Current query: fix it');
    expect(user.content).toContain('at most 2 additional search queries');
    expect(user.content).toContain('{"queries": ["first query", "second query"]}');
  });

  it('says (none) for a missing overview or conversation', () => {
    const [, user] = buildExpansionPrompt('q', [], '');
    expect(user.content).toContain('Summary of the earlier session:\n(none)');
    expect(user.content).toContain('Recent messages (oldest first):\n(none)');
  });

  it('clips a long message to its first code points and marks the cut', () => {
    const long = '字'.repeat(EXPANSION_MESSAGE_CHARS + 50);
    const [, user] = buildExpansionPrompt('q', [{ role: 'user', text: long }], '');
    expect(user.content).toContain(`[user] ${'字'.repeat(EXPANSION_MESSAGE_CHARS - 1)}…\n`);
  });
});

describe('buildDigestPrompt', () => {
  it('carries the query, the rendered block verbatim and the bullet limit, and names NO_RELEVANT_MEMORY', () => {
    const rendered = '<memory uri="viking://a.md" type="events" score="0.50" detail="full">\nx\n</memory>';
    const [system, user] = buildDigestPrompt('what shipped', rendered, 3);
    expect(system.role).toBe('system');
    expect(user.content.startsWith('Query: what shipped\n\n')).toBe(true);
    expect(user.content).toContain(`\n${rendered}\n`);
    expect(user.content).toContain('at most 3 bullets');
    expect(user.content).toContain('"source: <uri>"');
    expect(user.content).toContain('来源：<uri>');
    expect(user.content).toMatch(/answer exactly NO_RELEVANT_MEMORY and nothing else\.$/);
  });

  it('says "bullet" for one', () => {
    expect(buildDigestPrompt('q', 'r', 1)[1].content).toContain('at most 1 bullet with');
  });
});

describe('digestContext', () => {
  it('uses rendered when it has text, else the sources as memory blocks', () => {
    expect(digestContext('R', [{ uri: 'viking://a', text: 't' }])).toBe('R');
    expect(digestContext(' \n', [{ uri: 'viking://a', text: 't' }, { uri: 'viking://b', text: 'u' }])).toBe(
      '<memory uri="viking://a">\nt\n</memory>\n<memory uri="viking://b">\nu\n</memory>',
    );
  });

  it('shows an evidence block with groups with every URI in full, so the model cites what the allowlist holds', () => {
    const block = ['<memories base="viking://user/u/memories/events/">', '<memory uri="a.md">', 'one', '</memory>', '<memory uri="b.md" detail="overview">', 'two', '</memory>', '</memories>', '<memory uri="viking://resources/r.md" />'].join('\n');
    expect(digestContext(block, [])).toBe(
      '<memory uri="viking://user/u/memories/events/a.md">\none\n</memory>\n<memory uri="viking://user/u/memories/events/b.md" detail="overview">\ntwo\n</memory>\n<memory uri="viking://resources/r.md" />',
    );
    // A block without groups is shown as it is.
    expect(digestContext('<memory uri="viking://resources/r.md">\nx\n</memory>', [])).toBe('<memory uri="viking://resources/r.md">\nx\n</memory>');
  });
});

describe('buildQueryRewritePrompt', () => {
  it('asks for at most two alternatives as JSON', () => {
    const [, user] = buildQueryRewritePrompt('k8s undo');
    expect(user.content).toContain('Query: k8s undo');
    expect(user.content).toContain('at most 2 alternative search queries');
    expect(user.content).toContain('{"queries": []}');
  });
});
