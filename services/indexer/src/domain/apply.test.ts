import { LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb, type NodeRecord, type Visibility } from '@ctxmesh/stores';
import pino from 'pino';
import { RecordPool } from '../threads/record-pool';
import { Applier } from './apply';
import type { RecordBuilder } from './build';
import { buildRecords } from './records';
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

describe('Applier.applyBatch', () => {
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  /** Texts per embedder call, and documents per store call, in call order. */
  let embedCalls: number[];
  let storeCalls: Array<{ how: 'batch' | 'one'; docs: string[] }>;
  /** Document URIs whose store write fails (alone or in a batch). */
  let poisoned: Set<string>;
  let applier: Applier;
  const embedder = new LexicalEmbedder({ dimension: 256 });
  beforeEach(() => {
    db = openEmbeddedDb(':memory:');
    index = new EmbeddedVectorIndex(db, { dimension: 256 });
    embedCalls = [];
    storeCalls = [];
    poisoned = new Set();
    const counting: Embedder = { id: embedder.id, dimension: 256, supportsImages: false, embed: async (texts) => (embedCalls.push(texts.length), embedder.embed(texts)) };
    const store = Object.create(index) as EmbeddedVectorIndex;
    store.replaceDocuments = async (docs) => {
      storeCalls.push({ how: 'batch', docs: docs.map((d) => d.docUri) });
      if (docs.some((d) => poisoned.has(d.docUri))) throw new Error('store refused the batch');
      return index.replaceDocuments(docs);
    };
    store.replaceDocument = async (uri, records) => {
      storeCalls.push({ how: 'one', docs: [uri] });
      if (poisoned.has(uri)) throw new Error(`store refused ${uri}`);
      return index.replaceDocument(uri, records);
    };
    applier = new Applier({ index: store, embedder: counting, embedBatchSize: 8 });
  });
  afterEach(() => db.close());

  const body = async (uri: string) => ((await index.get([uri], VIS, 'full'))[0] as NodeRecord | null)?.body ?? null;
  const uris = (n: number) => Array.from({ length: n }, (_, i) => `viking://resources/batch/${i}.md`);

  it('embeds every text of the batch in shared embedder calls and stores the batch in one store write', async () => {
    const us = uris(20);
    const out = await applier.applyBatch(us.map((u, i) => write(u, `document ${i} about lighthouses`)));
    expect(out.map((o) => o.status === 'fulfilled' && o.value.status)).toEqual(us.map(() => 'applied'));
    // 20 single-passage documents: 20 texts in calls of embedBatchSize (8), one store write.
    expect(embedCalls).toEqual([8, 8, 4]);
    expect(storeCalls).toEqual([{ how: 'batch', docs: us }]);
    for (const [i, u] of us.entries()) expect(await body(u)).toBe(`document ${i} about lighthouses`);
  });

  it('retries the writes of a failed batch one by one: the bad one fails alone, its neighbours land', async () => {
    const us = uris(4);
    poisoned.add(us[2]!);
    const out = await applier.applyBatch(us.map((u) => write(u, `text of ${u}`)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((out[2] as PromiseRejectedResult).reason)).toContain(`store refused ${us[2]}`);
    expect(storeCalls[0]).toEqual({ how: 'batch', docs: us });
    expect(storeCalls.slice(1).map((c) => c.docs[0]).sort()).toEqual([...us].sort());
    expect(await Promise.all(us.map(body))).toEqual([`text of ${us[0]}`, `text of ${us[1]}`, null, `text of ${us[3]}`]);
  });

  it('reports an unchanged version and a refused create without writing them, and writes the rest together', async () => {
    const [a, b, c] = uris(3);
    await applier.apply(write(a!, 'same'));
    await applier.apply(write(b!, 'taken'));
    storeCalls = [];
    const out = await applier.applyBatch([write(a!, 'same'), write(b!, 'mine now', { kind: 'create' }), write(c!, 'new')]);
    expect(out.map((o) => (o.status === 'fulfilled' ? [o.value.status, o.value.changed, o.value.reason ?? ''] : o.reason))).toEqual([
      ['applied', false, ''],
      ['failed', false, 'ALREADY_EXISTS'],
      ['applied', true, ''],
    ]);
    expect(storeCalls).toEqual([{ how: 'batch', docs: [c] }]);
    expect(await body(b!)).toBe('taken');
  });

  it('applies writes that overlap an earlier write of the batch after it, in batch order', async () => {
    await applier.apply(write('viking://resources/dir/old.md', 'old'));
    const out = await applier.applyBatch([
      write('viking://resources/log.md', 'one;', { kind: 'append', writeId: 'a1' }),
      write('viking://resources/dir', '', { kind: 'delete' }),
      write('viking://resources/log.md', 'two;', { kind: 'append', writeId: 'a2' }),
      write('viking://resources/dir/new.md', 'new'),
      write('viking://resources/x.md', 'x1'),
      write('viking://resources/x.md', 'x2'),
    ]);
    expect(out.every((o) => o.status === 'fulfilled' && o.value.status === 'applied')).toBe(true);
    expect(await body('viking://resources/log.md')).toBe('one;two;');
    expect(await body('viking://resources/dir/old.md')).toBeNull();
    expect(await body('viking://resources/dir/new.md')).toBe('new');
    expect(await body('viking://resources/x.md')).toBe('x2');
  });

  it('orders a batch after an earlier apply of the same node', async () => {
    const u = 'viking://resources/race.md';
    const [first, batch] = await Promise.all([applier.apply(write(u, 'first')), applier.applyBatch([write(u, 'second')])]);
    expect(first.changed).toBe(true);
    expect(batch[0]).toMatchObject({ status: 'fulfilled', value: { changed: true } });
    expect(await body(u)).toBe('second');
  });

  it('falls back to one write at a time when the shared embedding fails, so only the write the embedder refuses fails', async () => {
    const refusing: Embedder = {
      id: embedder.id,
      dimension: 256,
      supportsImages: false,
      embed: async (texts) => (texts.some((t) => t.includes('unembeddable')) ? Promise.reject(new Error('embedder refused')) : embedder.embed(texts)),
    };
    const a = new Applier({ index, embedder: refusing });
    const out = await a.applyBatch([write('viking://resources/p.md', 'fine'), write('viking://resources/q.md', 'unembeddable'), write('viking://resources/r.md', 'also fine')]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await body('viking://resources/p.md')).toBe('fine');
    expect(await body('viking://resources/q.md')).toBeNull();
  });
});

describe('Applier with a record builder', () => {
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  const embedder = new LexicalEmbedder({ dimension: 256 });
  const log = pino({ level: 'silent' });
  beforeEach(() => {
    db = openEmbeddedDb(':memory:');
    index = new EmbeddedVectorIndex(db, { dimension: 256 });
  });
  afterEach(() => db.close());

  const points = async (ix: EmbeddedVectorIndex, uri: string) => (await ix.getDocument(uri, VIS)).map((r) => ({ ...r, vector: [...r.vector] }));

  it('stores exactly what the in-process path stores when the record threads build and embed, batched or alone', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} on tides, ropes and 港口 pilots number ${i}.`).join('\n\n');
    const ws = [write('viking://resources/guide.md', `# Guide\n\n${long}`), write('viking://user/alice/memories/events/m.md', 'Met the harbour master.'), write('viking://resources/a.ts', 'export const a = 1;\n')];
    const pool = new RecordPool({ threads: 1, embedder, outliner: null, maxPassageTokens: 64, log });
    const otherDb = openEmbeddedDb(':memory:');
    try {
      const viaThreads = new Applier({ index, embedder, maxPassageTokens: 64, now: () => 5, builder: pool });
      const other = new EmbeddedVectorIndex(otherDb, { dimension: 256 });
      const inProcess = new Applier({ index: other, embedder, maxPassageTokens: 64, now: () => 5 });
      const [batched, alone] = [await viaThreads.applyBatch(ws.slice(0, 2)), await viaThreads.apply(ws[2]!)];
      await inProcess.applyBatch(ws);
      expect(batched.every((o) => o.status === 'fulfilled' && o.value.changed)).toBe(true);
      expect(alone.changed).toBe(true);
      for (const w of ws) {
        const got = await points(index, w.uri);
        expect(got.length).toBeGreaterThan(0);
        expect(got).toEqual(await points(other, w.uri));
      }
      expect((await points(index, ws[0]!.uri)).length).toBeGreaterThan(2);
    } finally {
      await pool.close();
      otherDb.close();
    }
  });

  it('fails only the write whose records could not be built; the rest of the batch lands in one store write', async () => {
    const builder: RecordBuilder = {
      build: async (inputs) =>
        inputs.map((input) =>
          input.uri.includes('bad') ? { status: 'rejected', reason: new Error('cannot build') } : { status: 'fulfilled', value: { records: buildRecords(input), vectors: null } },
        ),
    };
    const stores: string[][] = [];
    const store = Object.create(index) as EmbeddedVectorIndex;
    store.replaceDocuments = async (docs) => (stores.push(docs.map((d) => d.docUri)), index.replaceDocuments(docs));
    const a = new Applier({ index: store, embedder, builder });
    const out = await a.applyBatch([write('viking://resources/1.md', 'one'), write('viking://resources/bad.md', 'two'), write('viking://resources/3.md', 'three')]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((out[1] as PromiseRejectedResult).reason)).toContain('cannot build');
    expect(stores).toEqual([['viking://resources/1.md', 'viking://resources/3.md']]);
    expect(await a.apply(write('viking://resources/bad.md', 'two')).catch((e: Error) => e.message)).toBe('cannot build');
    expect(await index.getDocument('viking://resources/bad.md', VIS)).toEqual([]);
  });
});
