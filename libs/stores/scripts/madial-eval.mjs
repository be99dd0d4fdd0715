#!/usr/bin/env node
// MADial-Bench recall of the embedded index's hybrid search (LexicalEmbedder + FTS5, RRF).
//
// Build first:   npx tsc -b libs/stores
// Run:           node libs/stores/scripts/madial-eval.mjs [--data /work/shared/data/madial-bench]
//                     [--dim 256] [--tuning '{"rrfK":60}'] [--weights '{"charGram":0.2}'] [--legs hybrid|dense|lexical]
//
// Protocol (kept honest on purpose): each language's whole memory archive is ingested as one
// user's memories (the `event` text of each memory is the memory body); the query of a test
// case is the dialogue *before* its first test turn (speaker tags included, the <BOD> marker
// dropped); no gold ids, names or per-dataset rules reach the search. recall@k = |relevant ∩
// top k| / |relevant|, averaged over the 160 test cases.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { LexicalEmbedder } = require('@ctxmesh/embedder');
const { openEmbeddedDb } = require('../dist/embedded/db.js');
const { EmbeddedVectorIndex } = require('../dist/embedded/vector-index.js');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const dataDir = args.data ?? '/work/shared/data/madial-bench';
const dim = Number(args.dim ?? 256);
const tuning = args.tuning ? JSON.parse(args.tuning) : {};
const weights = args.weights ? JSON.parse(args.weights) : undefined;
const legs = args.legs ?? 'hybrid';

const readJsonl = (p) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

const vis = { account: 'default', user: 'default', actorPeer: null, openPeers: false, allUsers: false, workspace: null };

async function evalLang(lang) {
  const memories = readJsonl(join(dataDir, lang, 'memory.json')).map((o) => {
    const [id, m] = Object.entries(o)[0];
    return { id: Number(id), text: m.event };
  });
  const dialogues = readJsonl(join(dataDir, lang, 'dialogue.json'));
  const embedder = new LexicalEmbedder({ dimension: dim, weights });
  const db = openEmbeddedDb(':memory:');
  const index = new EmbeddedVectorIndex(db, { dimension: dim, tuning });
  const now = Date.now();
  const vecs = await embedder.embed(memories.map((m) => m.text));
  for (let i = 0; i < memories.length; i++) {
    const m = memories[i];
    const uri = `viking://user/default/memories/events/madial-${m.id}.md`;
    await index.replaceDocument(uri, [
      {
        uri, docUri: uri, parentUri: 'viking://user/default/memories/events', contextType: 'memory', category: 'events', level: 2,
        account: 'default', owner: 'default', peer: '', workspace: 'default', subject: '', tags: [], createdAt: now, updatedAt: now,
        validFrom: null, validTo: null, title: '', abstract: m.text, overview: '', body: m.text, contentHash: `h${m.id}`,
        passageIndex: 0, links: [], vector: vecs[i], lexicalText: '',
      },
    ]);
  }
  // What the indexer does when an ingest drains (merges FTS5 segments; no effect on results).
  await index.optimize();
  const ks = [5, 10];
  const sums = { 5: 0, 10: 0 };
  const times = [];
  for (const d of dialogues) {
    const before = d.dialogue.slice(0, Math.min(...d['test-turn'])).filter((t) => !/^<(BOD|EOD)>\s*$/.test(t));
    const text = before.join('');
    const [vector] = await embedder.embed([text]);
    const t0 = process.hrtime.bigint();
    const [hits] = await index.search([
      { visibility: vis, vector: legs === 'lexical' ? null : vector, text: legs === 'dense' ? '' : text, targets: [], filter: null, limit: 10 },
    ]);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const got = hits.map((h) => Number(/madial-(\d+)\.md$/.exec(h.node.uri)[1]));
    const rel = new Set(d['relevant-id']);
    for (const k of ks) sums[k] += got.slice(0, k).filter((id) => rel.has(id)).length / rel.size;
  }
  await index.close();
  db.close();
  times.sort((a, b) => a - b);
  return { lang, n: dialogues.length, r5: sums[5] / dialogues.length, r10: sums[10] / dialogues.length, p50ms: times[times.length >> 1] };
}

for (const lang of ['en', 'zh']) {
  const r = await evalLang(lang);
  console.log(`${r.lang}  cases=${r.n}  recall@5=${r.r5.toFixed(3)}  recall@10=${r.r10.toFixed(3)}  search p50=${r.p50ms.toFixed(2)}ms  (dim=${dim}, legs=${legs})`);
}
