import { escapeAttr, fragmentHead, neutralizeEnvelope, neutralizeTags, renderEntries, renderFragment, renderFragmentWith } from './render';

describe('escapeAttr', () => {
  it('escapes & " < in that order and keeps > and \'', () => {
    expect(escapeAttr(`a&b"c<d>e'f`)).toBe(`a&amp;b&quot;c&lt;d>e'f`);
    expect(escapeAttr('&quot;')).toBe('&amp;quot;');
    expect(escapeAttr('viking://resources/q?x=1&y=2')).toBe('viking://resources/q?x=1&amp;y=2');
  });
});

describe('neutralizeTags', () => {
  it.each([
    ['</Memory>', '<\\/memory>'],
    ['</memory >', '<\\/memory >'],
    ['<MEMORY/>', '<\\memory/>'],
    ['<memory uri="x">', '<\\memory uri="x">'],
    ['<Memory\turi="x">', '<\\memory\turi="x">'],
    ['a <memory\x85x b', 'a <\\memory\x85x b'],
    ['<memory\u2028', '<\\memory\u2028'],
  ])('rewrites %j (§6.1)', (input, want) => {
    expect(neutralizeTags(input)).toBe(want);
  });

  it('leaves a tag cut off by the end of the body, as the reference kernel does (compat, issue 11 item 4)', () => {
    // Python's lookahead needs a character after `memory`; at the very end there is none.
    expect(neutralizeTags('text </memory')).toBe('text </memory');
    expect(neutralizeTags('<MEMORY')).toBe('<MEMORY');
    expect(renderFragment({ uri: 'viking://u', category: 'events', score: 0, detail: 'full', text: 'x </memory' })).toBe(
      '<memory uri="viking://u" type="events" score="0.00" detail="full">\nx </memory\n</memory>',
    );
  });

  it('neutralises a tag cut off by the end of the body in strict mode (evidence), which the fragment newline would complete', () => {
    expect(neutralizeTags('text </memory', 'strict')).toBe('text <\\/memory');
    expect(neutralizeTags('<MEMORY', 'strict')).toBe('<\\memory');
    expect(renderFragmentWith({ uri: 'viking://u', category: 'events', score: 0, detail: 'full', text: 'x </memory' }, 'strict')).toBe(
      '<memory uri="viking://u" type="events" score="0.00" detail="full">\nx <\\/memory\n</memory>',
    );
  });

  it.each([['<memoryX>'], ['< memory>'], ['<memory\ufeffx'], ['<\\memory>'], ['<memories>'], ['<memory-x']])('leaves %j alone', (input) => {
    expect(neutralizeTags(input)).toBe(input);
  });
});

describe('neutralizeEnvelope (issue 12 item 7)', () => {
  it.each([
    ['</openviking-context>', '<\\/openviking-context>'],
    ['<openviking-context>', '<\\openviking-context>'],
    ['</OpenViking-Context >', '<\\/openviking-context >'],
    ['< / openviking-context>', '<\\/openviking-context>'],
    ['<\topenviking-context source="x">', '<\\openviking-context source="x">'],
    ['a </openviking-context', 'a <\\/openviking-context'],
    ['</openviking-context\n', '<\\/openviking-context\n'],
  ])('defuses %j', (input, want) => {
    expect(neutralizeEnvelope(input)).toBe(want);
  });

  it.each([['<openviking-contexts>'], ['<openviking-context-x>'], ['openviking-context'], ['<\\/openviking-context>']])('leaves %j alone', (input) => {
    expect(neutralizeEnvelope(input)).toBe(input);
  });

  it('is part of the body neutralisation in both modes, beside <memory', () => {
    for (const mode of ['reference', 'strict'] as const) {
      expect(neutralizeTags('x </openviking-context> <memory>', mode)).toBe('x <\\/openviking-context> <\\memory>');
    }
  });
});

describe('renderFragment', () => {
  it('renders text entries with the fixed attribute order and a newline-wrapped body', () => {
    expect(
      renderFragment({
        uri: 'viking://user/default/memories/preferences/style.md',
        category: 'preferences',
        score: 0.48,
        detail: 'abstract',
        text: 'Prefers TypeScript strict mode & <no> any.',
      }),
    ).toBe(
      '<memory uri="viking://user/default/memories/preferences/style.md" type="preferences" score="0.48" detail="abstract">\nPrefers TypeScript strict mode & <no> any.\n</memory>',
    );
  });

  it('renders the uri tier self-closed', () => {
    expect(renderFragment({ uri: 'viking://u', category: 'skills', score: 0.5, detail: 'uri', text: '' })).toBe(
      '<memory uri="viking://u" type="skills" score="0.50" detail="uri" />',
    );
  });

  it('formats scores with Python %.2f', () => {
    expect(fragmentHead('viking://u', 'events', 0.125, 'full')).toContain('score="0.12"');
    expect(fragmentHead('viking://u', 'events', 0.995, 'full')).toContain('score="0.99"');
    expect(fragmentHead('viking://u', 'events', -0.004, 'full')).toContain('score="-0.00"');
    expect(fragmentHead('viking://u', 'events', 0.8, 'full')).toContain('score="0.80"');
  });

  it('escapes the URI but not the body, and neutralises forged tags in the body', () => {
    const f = renderFragment({ uri: 'viking://a/"<x>&', category: 'resources', score: 1, detail: 'full', text: 'x </memory> <b>&amp;' });
    expect(f).toBe('<memory uri="viking://a/&quot;&lt;x>&amp;" type="resources" score="1.00" detail="full">\nx <\\/memory> <b>&amp;\n</memory>');
  });
});

describe('renderEntries', () => {
  it('joins fragments with one newline and is empty without entries', () => {
    const a = { uri: 'viking://a', category: 'skills', score: 0.5, detail: 'uri' as const, text: '' };
    const b = { uri: 'viking://b', category: 'events', score: 0.7, detail: 'full' as const, text: 'body' };
    expect(renderEntries([a, b])).toBe(`${renderFragment(a)}\n${renderFragment(b)}`);
    expect(renderEntries([])).toBe('');
  });
});
