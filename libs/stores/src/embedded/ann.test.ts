import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { makeRecord } from '../contract/vector-index.contract';
import type { Visibility } from '../ports/vector-index';
import { openEmbeddedDb } from './db';
import { DEFAULT_ANN_OPTIONS, DenseAnn } from './ann';
import { type AnnBuilder, threadAnnBuilder } from './ann-build';
import { maxPendingFor } from './search';
import { EmbeddedVectorIndex } from './vector-index';

const embedder = new LexicalEmbedder({ dimension: 64 });
const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'glacier', 'harbor', 'island', 'jungle', 'kelp', 'lagoon', 'mesa', 'nebula', 'oasis', 'prairie'];
const text = (i: number) => `${WORDS[i % 16]} ${WORDS[(i * 7) % 16]} ${WORDS[(i * 3 + 1) % 16]} note ${i % 5}`;
const dense = (t: string, limit = 10, targets: string[] = []) => ({ visibility: vis, vector: embedder.embedOne(t), text: '', targets, filter: null, limit });

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !f(); i++) await new Promise((r) => setTimeout(r, 25));
}

describe('EmbeddedVectorIndex dense leg with the ANN index', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ctxmesh-ann-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers large scopes from the HNSW index with exact scores, keeps new writes and deletes exact, and reloads the saved index', async () => {
    const path = join(dir, 'x.db');
    const db = openEmbeddedDb(path);
    const ref = openEmbeddedDb(path);
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 100, addBatch: 64 } });
      const exact = new EmbeddedVectorIndex(ref, { dimension: 64, ann: false });
      const uri = (i: number) => `viking://resources/r/${i}.md`;
      await index.replaceDocuments(Array.from({ length: 400 }, (_, i) => ({ docUri: uri(i), records: [makeRecord(embedder, 'a', uri(i), text(i))] })));
      await index.search([dense('warm')]);
      const ann = (index as unknown as { anns: { of(a: string): { pending: Set<number>; size: number } } }).anns.of('a');
      await until(() => ann.pending.size === 0 && ann.size === 400);
      expect(ann.size).toBe(400);
      // Recall by rank, tie-aware: the i-th score of the ANN answer is the i-th exact score.
      let same = 0;
      for (let i = 0; i < 40; i++) {
        const [[a], [e]] = [await index.search([dense(text(i * 9))]), await exact.search([dense(text(i * 9))])];
        same += e.filter((x, r) => a[r] !== undefined && Math.abs(a[r]!.score - x.score) < 1e-5).length / e.length;
        // Scores are the exact cosines, whichever leg found the row.
        for (const h of a) {
          const twin = e.find((x) => x.node.uri === h.node.uri);
          if (twin) expect(h.score).toBeCloseTo(twin.score, 5);
        }
      }
      expect(same / 40).toBeGreaterThan(0.9);
      expect(index.denseStats().annSearches).toBeGreaterThan(40);
      // A new row is found at once (not yet in the index: scanned exactly), a deleted one never.
      await index.replaceDocument(uri(1000), [makeRecord(embedder, 'a', uri(1000), 'zeppelin quasar')]);
      await index.deleteDocument('a', uri(7));
      const [fresh] = await index.search([dense('zeppelin quasar', 3)]);
      expect(fresh[0]!.node.uri).toBe(uri(1000));
      const [gone] = await index.search([dense(text(7), 50)]);
      expect(gone.some((h) => h.node.uri === uri(7))).toBe(false);
      // A narrow target is scanned exactly.
      const [narrow] = await index.search([dense(text(3), 5, [uri(3)])]);
      expect(narrow.map((h) => h.node.uri)).toEqual([uri(3)]);
      await until(() => ann.pending.size === 0);
      await index.close();
      expect(readdirSync(dir).some((f) => f.endsWith('.usearch'))).toBe(true);
      // Reopened: the saved index is loaded, with the changes since it was saved replayed.
      const again = new EmbeddedVectorIndex(openEmbeddedDb(path), { dimension: 64, ann: { minRows: 100 } });
      const [r] = await again.search([dense('zeppelin quasar', 3)]);
      expect(r[0]!.node.uri).toBe(uri(1000));
      const reloaded = (again as unknown as { anns: { of(a: string): { pending: Set<number>; size: number } } }).anns.of('a');
      expect(reloaded.size).toBeGreaterThanOrEqual(400);
      await again.close();
    } finally {
      db.close();
      ref.close();
    }
  });

  it('removes a saved index of an account below the row threshold at its first search (one saved under a lower threshold is never loaded)', async () => {
    const path = join(dir, 'x.db');
    const db = openEmbeddedDb(path);
    try {
      const uri = (i: number) => `viking://resources/r/${i}.md`;
      const big = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 100, addBatch: 64 } });
      await big.replaceDocuments(Array.from({ length: 150 }, (_, i) => ({ docUri: uri(i), records: [makeRecord(embedder, 'a', uri(i), text(i))] })));
      await big.search([dense('warm')]);
      const ann = (big as unknown as { anns: { of(a: string): { pending: Set<number>; size: number } } }).anns.of('a');
      await until(() => ann.pending.size === 0 && ann.size === 150);
      await big.close();
      const saved = () => readdirSync(dir).filter((f) => f.includes('.ann-')).sort();
      expect(saved()).toEqual(['x.db.ann-61.usearch', 'x.db.ann-61.usearch.json']);
      // The same rows under a higher threshold: the file is removed, the search still exact.
      const small = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 1000 } });
      const [hits] = await small.search([dense(text(3), 1)]);
      expect(hits[0]!.node.uri).toBe(uri(3));
      expect(saved()).toEqual([]);
      await small.close();
    } finally {
      db.close();
    }
  });

  it('keeps the exact scan below the row threshold', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 1000 } });
      await index.replaceDocuments(Array.from({ length: 50 }, (_, i) => ({ docUri: `viking://resources/s/${i}.md`, records: [makeRecord(embedder, 'a', `viking://resources/s/${i}.md`, text(i))] })));
      await index.search([dense(text(1))]);
      expect(index.denseStats()).toEqual({ annSearches: 0, fallbacks: 0 });
    } finally {
      db.close();
    }
  });
});

describe('DenseAnn background build', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ctxmesh-ann-save-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds queued rows in steps that yield to the event loop (one group per step when the step time is spent), then is idle', async () => {
    const ann = new DenseAnn(8, null, { ...DEFAULT_ANN_OPTIONS, addStepMs: 0, addBatch: 2 });
    const vec = (id: number) => Float32Array.from({ length: 8 }, (_, i) => (i === id % 8 ? 1 : 0.1));
    for (let id = 1; id <= 10; id++) ann.pending.add(id);
    ann.drain(vec, () => 10);
    const seen: number[] = [];
    for (let turn = 0; turn < 8 && ann.pending.size > 0; turn++) {
      await new Promise((r) => setImmediate(r));
      seen.push(ann.pending.size);
    }
    expect(seen).toEqual([8, 6, 4, 2, 0]);
    await ann.idle();
    expect(ann.search(vec(3), 3)).toContain(3);
  });

  it('loads a saved index only when it was built with the same links and precision (an index saved with the former f16 default is rebuilt)', async () => {
    const path = join(dir, 'x.ann-a.usearch');
    const vec = (id: number) => Float32Array.from({ length: 8 }, (_, i) => (i === id % 8 ? 1 : 0.1 * (id % 3)));
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    const old = new DenseAnn(8, path, { ...DEFAULT_ANN_OPTIONS, quantization: 'f16', connectivity: 32 });
    for (const id of ids) old.pending.add(id);
    await old.buildNow(vec, () => 7, 1);
    old.close();
    expect(readdirSync(dir).sort()).toEqual(['x.ann-a.usearch', 'x.ann-a.usearch.json']);
    expect(new DenseAnn(8, path).load(0, ids)).toBe(false);
    expect(new DenseAnn(8, path, { ...DEFAULT_ANN_OPTIONS, quantization: 'f16' }).load(0, ids)).toBe(false);
    const same = new DenseAnn(8, path, { ...DEFAULT_ANN_OPTIONS, quantization: 'f16', connectivity: 32 });
    expect(same.load(0, ids)).toBe(true);
    expect(same.size).toBe(20);
    expect(same.seq).toBe(7);
  });
});

describe('the ANN leg while its index is being built', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ctxmesh-ann-build-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('scans while more rows are queued than maxPendingFor allows, then uses the index; prepareDense builds it at once', async () => {
    expect(maxPendingFor(10_000)).toBe(1024);
    expect(maxPendingFor(500_000)).toBe(10_000);
    const db = openEmbeddedDb(join(dir, 'x.db'));
    try {
      // Steps of no time and two rows: the background build is still far from done after the first search.
      const index = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 100, addStepMs: 0, addBatch: 2 } });
      const uri = (i: number) => `viking://resources/b/${i}.md`;
      await index.replaceDocuments(Array.from({ length: 1500 }, (_, i) => ({ docUri: uri(i), records: [makeRecord(embedder, 'a', uri(i), text(i))] })));
      const [first] = await index.search([dense(text(5))]);
      expect(first.length).toBeGreaterThan(0);
      expect(index.denseStats()).toEqual({ annSearches: 0, fallbacks: 0 });
      // /metrics reports the rows still queued for the index, then none once it is built.
      expect(index.backgroundRows().ann).toBeGreaterThan(maxPendingFor(1500));
      await index.prepareDense();
      expect(index.backgroundRows().ann).toBe(0);
      const ann = (index as unknown as { anns: { of(a: string): { pending: Set<number>; size: number } } }).anns.of('a');
      expect(ann.pending.size).toBe(0);
      expect(ann.size).toBe(1500);
      const [second] = await index.search([dense(text(5))]);
      // Many texts repeat: compare the scores the scan and the index give, rank by rank.
      expect(second.map((h) => h.score.toFixed(5))).toEqual(first.map((h) => h.score.toFixed(5)));
      expect(index.denseStats().annSearches).toBe(1);
      await index.close();
    } finally {
      db.close();
    }
  });
});

describe('the ANN build in a thread of its own', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ctxmesh-ann-away-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const uri = (i: number) => `viking://resources/w/${i}.md`;
  type Ann = { pending: Set<number>; size: number; idle(): Promise<void> };
  const annOf = (index: EmbeddedVectorIndex): Ann => (index as unknown as { anns: { of(a: string): Ann } }).anns.of('a');

  it('builds the whole index in a worker thread, swaps it in, and re-queues the rows rewritten while it ran', async () => {
    const real = threadAnnBuilder();
    expect(real).not.toBeNull();
    // The build's answer is held until the test has rewritten a row the worker already read.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const builds: Array<Promise<Int32Array>> = [];
    const builder: AnnBuilder = (req) => {
      const b = real!(req);
      builds.push(b.done);
      return { done: gate.then(() => b.done), cancel: b.cancel };
    };
    const db = openEmbeddedDb(join(dir, 'x.db'));
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 100, offThreadRows: 200 }, annBuilder: builder });
      await index.replaceDocuments(Array.from({ length: 600 }, (_, i) => ({ docUri: uri(i), records: [makeRecord(embedder, 'a', uri(i), text(i))] })));
      await index.search([dense(text(5))]);
      const ann = annOf(index);
      expect(builds).toHaveLength(1);
      expect(await builds[0]).toHaveLength(600);
      // While it runs, nothing was added on this thread: every row is still queued.
      expect(ann.size).toBe(0);
      expect(ann.pending.size).toBe(600);
      // Row 5 gets other words after the worker read its vector; the sync notes the change.
      await index.replaceDocument(uri(5), [makeRecord(embedder, 'a', uri(5), 'zeppelin quasar')]);
      await index.search([dense(text(6))]);
      release();
      await until(() => ann.size >= 599);
      // The rewritten row was not taken from the stale build: it is queued, then added here.
      await ann.idle();
      expect(ann.pending.size).toBe(0);
      expect(ann.size).toBe(600);
      const [hit] = await index.search([dense('zeppelin quasar', 3)]);
      expect(hit[0]!.node.uri).toBe(uri(5));
      expect(index.denseStats().annSearches).toBeGreaterThan(0);
      await index.close();
      expect(readdirSync(dir).some((f) => f.endsWith('.usearch'))).toBe(true);
      expect(readdirSync(dir).some((f) => f.includes('.build-'))).toBe(false);
    } finally {
      db.close();
    }
  });

  it('builds on the search thread in steps when the thread fails', async () => {
    const failing: AnnBuilder = () => ({ done: Promise.reject(new Error('no thread here')), cancel: () => undefined });
    const db = openEmbeddedDb(join(dir, 'y.db'));
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 64, ann: { minRows: 100, offThreadRows: 200, addBatch: 64 }, annBuilder: failing });
      await index.replaceDocuments(Array.from({ length: 300 }, (_, i) => ({ docUri: uri(i), records: [makeRecord(embedder, 'a', uri(i), text(i))] })));
      await index.search([dense(text(5))]);
      const ann = annOf(index);
      await until(() => ann.size === 300);
      expect(ann.size).toBe(300);
      expect(ann.pending.size).toBe(0);
      await index.close();
    } finally {
      db.close();
    }
  });
});
