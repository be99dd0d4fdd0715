import { loadOutline } from './outliner';

describe('loadOutline', () => {
  it('returns a working synchronous outline function', async () => {
    const failures: unknown[] = [];
    const outline = await loadOutline((e) => failures.push(e), { languages: ['python'] });
    expect(failures).toEqual([]);
    expect(outline).not.toBeNull();
    expect(outline!('a.py', 'def f(x):\n    return x\n').split('\n')[0]).toBe('# a.py [aider-repomap-lite, compact]');
  });

  it('returns null and reports why when a grammar cannot be loaded, instead of throwing', async () => {
    const failures: unknown[] = [];
    const outline = await loadOutline((e) => failures.push(e), { languages: ['klingon' as never] });
    expect(outline).toBeNull();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(Error);
  });
});
