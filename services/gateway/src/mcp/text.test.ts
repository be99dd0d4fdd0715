import { contextText, listText, NO_CONTEXT_TEXT } from './text';

describe('contextText', () => {
  it.each([
    [{ digest: 'D', rendered: 'R' }, 'D'],
    [{ digest: ' \n', rendered: 'R' }, 'R'],
    [{ digest: '', rendered: '  ' }, NO_CONTEXT_TEXT],
    [{ digest: '', rendered: '' }, 'No matching context found.'],
  ])('%j → %p', (result, expected) => {
    expect(contextText(result)).toBe(expected);
  });
});

describe('listText', () => {
  const hit = (uri: string, score: number, abstract = '') => ({ context_type: 'resource', uri, level: 2, score, abstract, tags: [] });

  it('lists buckets with hits in fixed order, abstracts on one indented line', () => {
    const text = listText({
      memories: [],
      resources: [hit('viking://resources/a.md', 0.905, 'line one\n  line two')],
      skills: [hit('viking://agent/skills/s', 0.4)],
      total: 2,
    });
    expect(text).toBe('resources:\n- viking://resources/a.md (resource, level 2, score 0.91)\n  line one line two\n\nskills:\n- viking://agent/skills/s (resource, level 2, score 0.40)');
  });

  it('says nothing was found when every bucket is empty', () => {
    expect(listText({ memories: [], resources: [], skills: [], total: 0 })).toBe(NO_CONTEXT_TEXT);
  });
});
