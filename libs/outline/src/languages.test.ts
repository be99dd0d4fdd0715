import { baseName, languageForFile, LANGUAGES, SUPPORTED_LANGUAGES } from './languages';
import { clip, tidy } from './render';

describe('languageForFile', () => {
  it.each([
    ['src/a.ts', 'typescript'],
    ['types/index.d.ts', 'typescript'],
    ['x.MTS', 'typescript'],
    ['App.tsx', 'tsx'],
    ['a.jsx', 'javascript'],
    ['a.cjs', 'javascript'],
    ['.eslintrc.js', 'javascript'],
    ['m.py', 'python'],
    ['stub.pyi', 'python'],
    ['main.go', 'go'],
    ['lib.rs', 'rust'],
    ['A.java', 'java'],
    ['A.cs', 'csharp'],
    ['a.c', 'cpp'],
    ['a.h', 'cpp'],
    ['a.hpp', 'cpp'],
    ['Rakefile.rake', 'ruby'],
    ['i.php', 'php'],
    ['run.sh', 'bash'],
    ['viking://resources/app/src/server.ts', 'typescript'],
    ['viking://resources/app/src/server.ts#p3', 'typescript'],
  ])('maps %j to %s', (file, lang) => {
    expect(languageForFile(file)).toBe(lang);
  });

  it.each(['README.md', 'a.txt', 'a.json', 'a.yaml', 'a.yml', 'a.toml', 'a.csv', 'a.html', 'a.css', 'Makefile', '.bashrc', 'dir/', ''])(
    'maps %j to null',
    (file) => {
      expect(languageForFile(file)).toBeNull();
    },
  );

  it('never maps one extension to two languages', () => {
    const all = LANGUAGES.flatMap((l) => l.extensions);
    expect(new Set(all).size).toBe(all.length);
    expect(LANGUAGES.map((l) => l.id)).toEqual([...SUPPORTED_LANGUAGES]);
  });
});

describe('baseName', () => {
  it('keeps the last path segment without query or fragment', () => {
    expect(baseName('viking://resources/app/src/server.ts#p3')).toBe('server.ts');
    expect(baseName('C:\\work\\a.py')).toBe('a.py');
    expect(baseName('plain.go')).toBe('plain.go');
    expect(baseName('a/b/')).toBe('b');
  });
});

describe('tidy', () => {
  it('collapses whitespace and the punctuation of multi-line parameter lists', () => {
    expect(tidy('f(\n  a: number,\n  b: string,\n): void')).toBe('f(a: number, b: string): void');
    expect(tidy('  New[ T any ](x int)\t')).toBe('New[T any](x int)');
  });
});

describe('clip', () => {
  it('leaves short text alone and cuts long text to the limit with an ellipsis', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('abcdef', 4)).toHaveLength(4);
  });

  it('never splits a surrogate pair', () => {
    expect(clip('ab😀cd', 4)).toBe('ab…');
  });
});
