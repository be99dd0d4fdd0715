import { createOutliner } from './index';

// A separate file: jest gives it a fresh module registry, so no grammar is loaded yet.
describe('createOutliner (lazy grammars)', () => {
  it('loads only the requested grammars, then others on prepare()', async () => {
    const outliner = await createOutliner({ languages: ['python'] });
    expect(outliner.loadedLanguages()).toEqual(['python']);
    expect(outliner.outline('a.py', 'def f():\n    pass\n')).toBe('# a.py [aider-repomap-lite, compact]\ndef f()');

    // Not loaded yet: "" now (never a throw), the grammar is fetched for later calls.
    expect(outliner.outline('main.go', 'package m\nfunc F() {}\n')).toBe('');
    await expect(outliner.prepare('main.go')).resolves.toBe(true);
    expect(outliner.outline('main.go', 'package m\nfunc F() {}\n')).toBe('# main.go [aider-repomap-lite, compact]\nfunc F()');

    await expect(outliner.prepare('rust')).resolves.toBe(true);
    await expect(outliner.prepare('notes.md')).resolves.toBe(false);
    expect(outliner.loadedLanguages()).toEqual(['python', 'go', 'rust']);
    // Compiling three WASM grammars takes well over jest's default 5 s on a loaded 2-core host
    // (a flake in a full run beside other work); the test asserts what loads, not how fast.
  }, 60_000);
});
