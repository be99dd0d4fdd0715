import { LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb, type NodeRecord, type Visibility } from '@ctxmesh/stores';
import { Applier } from './apply';
import type { ValidWrite } from './write';

const VIS: Visibility = { account: 'acme', user: 'alice', actorPeer: null, openPeers: true, allUsers: true, workspace: null };

function write(uri: string, content: string, over: Partial<ValidWrite> = {}): ValidWrite {
  return { writeId: `w-${Math.random()}`, kind: 'replace', uri, content, account: 'acme', workspace: 'default', subject: '', tags: [], validFrom: null, validTo: null, ...over };
}

describe('Applier', () => {
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  let clock: number;
  let applier: Applier;
  const embedder = new LexicalEmbedder({ dimension: 256 });
  beforeEach(() => {
    db = openEmbeddedDb(':memory:');
    index = new EmbeddedVectorIndex(db, { dimension: 256 });
    clock = 1_000_000;
    applier = new Applier({ index, embedder, now: () => clock, maxPassageTokens: 64 });
  });
  afterEach(() => db.close());

  const doc = async (uri: string) => (await index.get([uri], VIS, 'full'))[0] as NodeRecord | null;

  it('changes nothing when the same content is written again', async () => {
    const first = await applier.apply(write('viking://resources/a.md', 'The lighthouse keeper logs storms.'));
    expect(first).toMatchObject({ status: 'applied', changed: true, nodes: 1 });
    clock += 5000;
    const again = await applier.apply(write('viking://resources/a.md', 'The lighthouse keeper logs storms.'));
    expect(again).toEqual({ status: 'applied', contentHash: first.contentHash, nodes: 0, changed: false });
    expect((await doc('viking://resources/a.md'))!.updatedAt).toBe(1_000_000);
  });

  it('re-indexes the same content when its tags change, keeping createdAt', async () => {
    await applier.apply(write('viking://resources/a.md', 'body'));
    clock += 5000;
    const r = await applier.apply(write('viking://resources/a.md', 'body', { tags: ['env=prod'] }));
    expect(r.changed).toBe(true);
    expect(await doc('viking://resources/a.md')).toMatchObject({ createdAt: 1_000_000, updatedAt: 1_005_000, tags: ['env=prod'] });
  });

  it('refuses create on an existing node or directory, but accepts the identical version again', async () => {
    const created = await applier.apply(write('viking://resources/a.md', 'one', { kind: 'create' }));
    expect(created.status).toBe('applied');
    expect(await applier.apply(write('viking://resources/a.md', 'two', { kind: 'create' }))).toMatchObject({ status: 'failed', reason: 'ALREADY_EXISTS', nodes: 0 });
    expect(await applier.apply(write('viking://resources/a.md', 'one', { kind: 'create' }))).toMatchObject({ status: 'applied', changed: false });
    await applier.apply(write('viking://resources/dir/x.md', 'inside'));
    expect(await applier.apply(write('viking://resources/dir', 'a file over a directory', { kind: 'create' }))).toMatchObject({ status: 'failed', reason: 'ALREADY_EXISTS' });
    expect((await doc('viking://resources/a.md'))!.body).toBe('one');
  });

  it('appends to the stored body in call order, and creates a missing node', async () => {
    const uri = 'viking://user/alice/memories/events/log.md';
    const results = await Promise.all(['a\n', 'b\n', 'c\n'].map((c, i) => applier.apply(write(uri, c, { kind: 'append', writeId: `ap${i}` }))));
    expect(results.every((r) => r.status === 'applied' && r.changed)).toBe(true);
    expect((await doc(uri))!.body).toBe('a\nb\nc\n');
    expect((await doc(uri))!.abstract).toBe('a\nb\nc');
  });

  it('recognises a redelivered append that already landed', async () => {
    const uri = 'viking://resources/log.md';
    await applier.apply(write(uri, 'start;', { kind: 'replace' }));
    const once = await applier.apply(write(uri, 'more;', { kind: 'append', writeId: 'ap-1' }));
    const again = await applier.apply(write(uri, 'more;', { kind: 'append', writeId: 'ap-1' }));
    expect(once.changed).toBe(true);
    expect(again).toEqual({ status: 'applied', contentHash: once.contentHash, nodes: 0, changed: false });
    expect((await doc(uri))!.body).toBe('start;more;');
    // Another write with the same text is a real second append.
    await applier.apply(write(uri, 'more;', { kind: 'append', writeId: 'ap-2' }));
    expect((await doc(uri))!.body).toBe('start;more;more;');
  });

  it('writes passages with the document and replaces them all on the next version', async () => {
    const uri = 'viking://resources/big.md';
    const long = Array.from({ length: 12 }, (_, i) => `## Part ${i}\n\n` + 'alpha beta gamma delta '.repeat(12)).join('\n\n');
    const r = await applier.apply(write(uri, long));
    expect(r.nodes).toBeGreaterThan(2);
    expect((await index.getDocument(uri, VIS)).map((p) => p.passageIndex)).toEqual(Array.from({ length: r.nodes }, (_, i) => i));
    await applier.apply(write(uri, 'now short'));
    expect((await index.getDocument(uri, VIS)).map((p) => p.uri)).toEqual([uri]);
  });

  it('deletes a directory subtree and reports the points removed', async () => {
    await applier.apply(write('viking://resources/d/a.md', 'a'));
    await applier.apply(write('viking://resources/d/sub/b.md', 'b'));
    await applier.apply(write('viking://resources/d/.abstract.md', 'about d'));
    await applier.apply(write('viking://resources/other.md', 'keep'));
    expect(await applier.apply(write('viking://resources/d', '', { kind: 'delete' }))).toEqual({ status: 'applied', contentHash: '', nodes: 3, changed: true });
    expect(await index.stats('acme')).toEqual({ points: 1, documents: 1 });
    expect(await applier.apply(write('viking://resources/d', '', { kind: 'delete' }))).toMatchObject({ status: 'applied', nodes: 0, changed: false });
  });

  it('keeps two accounts’ nodes of the same URI apart: create, replace, append and delete each touch one account', async () => {
    const uri = 'viking://resources/team/handbook.md';
    const globex: Visibility = { ...VIS, account: 'globex' };
    const inGlobex = { account: 'globex' };
    expect(await applier.apply(write(uri, 'Acme handbook: ship on Fridays.', { kind: 'create' }))).toMatchObject({ status: 'applied', changed: true });
    // The URI exists in acme, not in globex: a create there is no conflict.
    expect(await applier.apply(write(uri, 'Globex handbook: never ship on Fridays.', { ...inGlobex, kind: 'create' }))).toMatchObject({ status: 'applied', changed: true });
    await applier.apply(write(uri, ' Review first.', { ...inGlobex, kind: 'append', writeId: 'g-ap' }));
    expect(await applier.apply(write(uri, 'Acme handbook: ship on Fridays.'))).toMatchObject({ changed: false });
    expect(await applier.apply(write(uri, 'Acme handbook: ship on Fridays.', inGlobex))).toMatchObject({ changed: true });
    await applier.apply(write(uri, 'Globex handbook: never ship on Fridays. Review first.', inGlobex));
    const body = async (vis: Visibility) => ((await index.get([uri], vis, 'full'))[0] as NodeRecord | null)?.body ?? null;
    expect(await body(VIS)).toBe('Acme handbook: ship on Fridays.');
    expect(await body(globex)).toBe('Globex handbook: never ship on Fridays. Review first.');
    expect(await applier.apply(write('viking://resources/team', '', { kind: 'delete' }))).toMatchObject({ status: 'applied', nodes: 1, changed: true });
    expect(await body(VIS)).toBeNull();
    expect(await body(globex)).toBe('Globex handbook: never ship on Fridays. Review first.');
    expect(await index.stats('globex')).toEqual({ points: 1, documents: 1 });
  });

  it('leaves the previous version searchable when embedding fails', async () => {
    const failing: Embedder = { id: embedder.id, dimension: 256, supportsImages: false, embed: async () => Promise.reject(new Error('embedder down')) };
    await applier.apply(write('viking://resources/a.md', 'old version'));
    const broken = new Applier({ index, embedder: failing });
    await expect(broken.apply(write('viking://resources/a.md', 'new version'))).rejects.toThrow('embedder down');
    expect((await doc('viking://resources/a.md'))!.body).toBe('old version');
  });

  it('refuses an embedder whose dimension differs from the index', () => {
    expect(() => new Applier({ index, embedder: new LexicalEmbedder({ dimension: 128 }) })).toThrow(RangeError);
  });
});
