import { FakeIndex, record } from './__tests__/fake-index';
import { ContentNotFoundError, readContent } from './content';
import { AccessDeniedError, type CallerScope } from '@ctxmesh/stores';

const U = 'viking://user/alice';
const alice: CallerScope = { account: 'acme', user: 'alice', role: 'user', actorPeer: null, workspace: null };
const MEM = `${U}/memories/events/launch.md`;
const MEM_BODY = '# Summary\nShipped.\n<!-- MEMORY_FIELDS {} -->';

function index() {
  return new FakeIndex([
    record(MEM, MEM_BODY, { owner: 'alice', contextType: 'memory', abstract: '# Summary\nShipped.', overview: 'Shipped.', contentHash: 'm1' }),
    record('viking://resources/docs/.abstract.md', 'Docs in brief.\n', { level: 0, abstract: 'Docs in brief.', overview: '', contentHash: 'a1' }),
    record('viking://resources/docs/.overview.md', '---\ndirectory: docs\n---\n# Docs\nAll of them.', { level: 1, abstract: '', overview: '# Docs\nAll of them.', contentHash: 'o1' }),
    record('viking://resources/bare/x.md', 'x'),
    record('viking://resources/bad/.overview.md', '---\nnot closed', { level: 1, abstract: '', overview: '' }),
    record(`${U}/peers/bob/memories/events/b.md`, 'Bob', { owner: 'alice', peer: 'bob' }),
    record('viking://user/carol/memories/events/c.md', 'Carol', { owner: 'carol' }),
  ]);
}

describe('readContent', () => {
  it('reads a file’s stored content as written, and its stored abstract and overview', async () => {
    const ix = index();
    expect(await readContent(ix, alice, MEM, 'read')).toEqual({ text: MEM_BODY, contentHash: 'm1', isDirectory: false });
    expect((await readContent(ix, alice, MEM, 'abstract')).text).toBe('# Summary\nShipped.');
    expect((await readContent(ix, alice, MEM, 'overview')).text).toBe('Shipped.');
    expect(ix.gets).toHaveLength(3);
  });

  it('reads a directory’s sidecars: abstract, overview without front matter, read = the overview as written', async () => {
    const ix = index();
    expect(await readContent(ix, alice, 'viking://resources/docs', 'abstract')).toEqual({ text: 'Docs in brief.', contentHash: 'a1', isDirectory: true });
    expect(await readContent(ix, alice, 'viking://resources/docs', 'overview')).toEqual({ text: '# Docs\nAll of them.', contentHash: 'o1', isDirectory: true });
    expect((await readContent(ix, alice, 'viking://resources/docs', 'read')).text).toBe('---\ndirectory: docs\n---\n# Docs\nAll of them.');
  });

  it('answers "" for a directory without sidecars and for a refused front matter', async () => {
    const ix = index();
    expect(await readContent(ix, alice, 'viking://resources/bare', 'abstract')).toEqual({ text: '', contentHash: '', isDirectory: true });
    expect((await readContent(ix, alice, 'viking://resources/bad', 'overview')).text).toBe('');
  });

  it('is NOT_FOUND for an unknown URI and for a peer hidden by the actor peer', async () => {
    const ix = index();
    await expect(readContent(ix, alice, 'viking://resources/nope.md', 'read')).rejects.toBeInstanceOf(ContentNotFoundError);
    await expect(readContent(ix, { ...alice, actorPeer: 'dave' }, `${U}/peers/bob/memories/events/b.md`, 'read')).rejects.toBeInstanceOf(ContentNotFoundError);
    expect((await readContent(ix, alice, `${U}/peers/bob/memories/events/b.md`, 'read')).text).toBe('Bob');
  });

  it('is NOT_FOUND in another account', async () => {
    await expect(readContent(index(), { ...alice, account: 'globex' }, MEM, 'read')).rejects.toBeInstanceOf(ContentNotFoundError);
  });

  it('refuses another user’s space to a plain user without touching the store, and lets root read it', async () => {
    const ix = index();
    await expect(readContent(ix, alice, 'viking://user/carol/memories/events/c.md', 'read')).rejects.toBeInstanceOf(AccessDeniedError);
    expect(ix.gets).toEqual([]);
    expect((await readContent(ix, { ...alice, role: 'root' }, 'viking://user/carol/memories/events/c.md', 'read')).text).toBe('Carol');
  });
});
