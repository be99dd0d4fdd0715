#!/usr/bin/env node
// Latency of the embedded VectorIndex for one context request (a batch of ~10 searches), at a
// given corpus size. Not a test: it prints medians.
//
// Build first:   npx tsc -b libs/stores
// Run:           node --expose-gc libs/stores/scripts/vector-bench.mjs [--n 10000] [--dim 256] [--reps 50] [--db /tmp/x.db] [--tuning '{"maxQueryPostings":5000}']
//
// Corpus: n synthetic nodes in one account, spread like a real user's tree: the caller's
// memories in four buckets (45%), peer memories (10%), resources (30%), skills (5%) and other
// users' memories (10%). Texts are 12–40 words drawn from a Zipf vocabulary of 20,000 English-like
// words, with every 10th text in Chinese. Queries are 8–20 word snippets of the same kind.
//
// A "context request" is what gather sends in one batch for the chat preset with peer_scope
// "all": six bucket searches (four memory buckets, resources, skills; each with its targets and
// a context_type filter), four open-context peer scans, one vector and one text. "flat" is
// the two-search flat mode (default scope plus a peer scan).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { LexicalEmbedder } = require('@ctxmesh/embedder');
const { openEmbeddedDb } = require('../dist/embedded/db.js');
const { EmbeddedVectorIndex } = require('../dist/embedded/vector-index.js');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const N = Number(args.n ?? 10000);
const DIM = Number(args.dim ?? 256);
const REPS = Number(args.reps ?? 50);
const tuning = args.tuning ? JSON.parse(args.tuning) : {};

// Deterministic PRNG so runs are comparable.
let seed = 42;
const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
const SYL = ['ka', 'lo', 'mi', 'ren', 'to', 'sa', 'vel', 'dor', 'ni', 'pa', 'qu', 'es', 'tar', 'lin', 'bo', 'gri', 'sto', 'mar', 'fen', 'ul'];
const VOCAB = Array.from({ length: 20000 }, (_, i) => {
  let w = '';
  let x = i + 7;
  do {
    w += SYL[x % SYL.length];
    x = Math.floor(x / SYL.length);
  } while (x > 0);
  return w;
});
const HAN = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rnd() * Math.log(VOCAB.length))) - 1)];
const enText = (n) => Array.from({ length: n }, zipf).join(' ');
const zhText = (n) => Array.from({ length: n }, () => HAN[Math.floor(Math.pow(rnd(), 2) * HAN.length)]).join('');

const BUCKETS = ['events', 'entities', 'preferences', 'experiences'];
const PEERS = ['p1', 'p2', 'p3', 'p4'];
function uriFor(i) {
  const r = rnd();
  if (r < 0.45) return `viking://user/me/memories/${BUCKETS[i % 4]}/m${i}.md`;
  if (r < 0.55) return `viking://user/me/peers/${PEERS[i % 4]}/memories/${BUCKETS[i % 4]}/pm${i}.md`;
  if (r < 0.85) return `viking://resources/docs/d${i % 200}/r${i}.md`;
  if (r < 0.9) return `viking://agent/skills/s${i}.md`;
  return `viking://user/other${i % 10}/memories/events/o${i}.md`;
}
function record(i, embedder) {
  const uri = uriFor(i);
  const segs = uri.slice(9).split('/');
  const owner = segs[0] === 'user' ? segs[1] : '';
  const peer = segs[2] === 'peers' ? segs[3] : '';
  const text = i % 10 === 0 ? zhText(20 + Math.floor(rnd() * 40)) : enText(12 + Math.floor(rnd() * 28));
  const ctype = uri.includes('/memories/') ? 'memory' : uri.includes('/skills/') ? 'skill' : 'resource';
  const now = Date.now();
  return {
    uri, docUri: uri, parentUri: uri.slice(0, uri.lastIndexOf('/')), contextType: ctype, category: ctype === 'memory' ? BUCKETS[i % 4] : ctype === 'skill' ? 'skills' : 'resources',
    level: 2, account: 'acct', owner, peer, workspace: 'default', subject: '', tags: [], createdAt: now, updatedAt: now, validFrom: null, validTo: null,
    title: '', abstract: text.slice(0, 256), overview: '', body: text, contentHash: `h${i}`, passageIndex: 0, links: [], vector: embedder.embedOne(text), lexicalText: '',
  };
}

const dir = args.db ? null : mkdtempSync(join(tmpdir(), 'ctxmesh-bench-'));
const path = args.db ?? join(dir, 'bench.db');
const db = openEmbeddedDb(path);
const embedder = new LexicalEmbedder({ dimension: DIM });
const index = new EmbeddedVectorIndex(db, { dimension: DIM, tuning });
const existing = (await index.stats('acct')).points;
let t0 = Date.now();
for (let i = existing; i < N; i++) {
  const r = record(i, embedder);
  await index.replaceDocument(r.uri, [r]);
}
console.log(`corpus: ${N} nodes (${N - existing} written in ${((Date.now() - t0) / 1000).toFixed(1)} s) at ${path}`);
if (N > existing) {
  t0 = Date.now();
  await index.optimize();
  console.log(`optimize: ${Date.now() - t0} ms`);
}

const me = { account: 'acct', user: 'me', actorPeer: 'p1', openPeers: false, allUsers: false, workspace: null };
const open = { ...me, actorPeer: null, openPeers: true };
const must = (t) => ({ op: 'must', field: 'context_type', conds: [t] });
function contextRequest(text, vector) {
  const q = (visibility, targets, filter, limit) => ({ visibility, vector, text, targets, filter, limit });
  const out = [];
  for (const b of BUCKETS) out.push(q(me, [`viking://user/me/memories/${b}`, `viking://user/me/peers/p1/memories/${b}`], must('memory'), 9));
  out.push(q(me, ['viking://user/me/resources', 'viking://resources', 'viking://user/me/peers/p1/resources'], must('resource'), 3));
  out.push(q(me, ['viking://user/me/skills', 'viking://agent/skills'], must('skill'), 3));
  for (let i = 0; i < 4; i++) out.push(q(open, ['viking://user/me/peers'], must('memory'), 36));
  return out;
}
function flatRequest(text, vector) {
  return [
    { visibility: me, vector, text, targets: [], filter: null, limit: 10 },
    { visibility: open, vector, text, targets: ['viking://user/me/peers'], filter: null, limit: 40 },
  ];
}
const queries = Array.from({ length: REPS }, (_, i) => (i % 5 === 0 ? zhText(12) : enText(8 + Math.floor(rnd() * 12))));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];

// Warm the scan cache (first search loads it from SQLite), then the JIT, then collect the
// load's garbage so it is not charged to the measured requests.
t0 = Date.now();
await index.search(flatRequest('warm up', embedder.embedOne('warm up')));
console.log(`scan cache load: ${Date.now() - t0} ms`);
for (const text of queries.slice(0, 10)) {
  await index.search(contextRequest(text, embedder.embedOne(text)));
  await index.search(flatRequest(text, embedder.embedOne(text)));
}
globalThis.gc?.();

for (const [name, build] of [['context request (10 searches)', contextRequest], ['flat request (2 searches)', flatRequest]]) {
  for (const legs of ['hybrid', 'dense', 'lexical']) {
    const times = [];
    const cpu = [];
    for (const text of queries) {
      const vector = embedder.embedOne(text);
      const batch = build(legs === 'dense' ? '' : text, legs === 'lexical' ? null : vector);
      const c0 = process.cpuUsage();
      const s = process.hrtime.bigint();
      await index.search(batch);
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    // CPU time is reported beside wall time because the machine is shared: it is the cost of the work itself.
    console.log(`${name.padEnd(30)} ${legs.padEnd(8)} wall median ${median(times).toFixed(2)} ms  p90 ${p90(times).toFixed(2)} ms   cpu median ${median(cpu).toFixed(2)} ms`);
  }
}
const te = [];
for (const text of queries) {
  const s = process.hrtime.bigint();
  await embedder.embed([text]);
  te.push(Number(process.hrtime.bigint() - s) / 1e6);
}
console.log(`query embedding (LexicalEmbedder)           median ${median(te).toFixed(3)} ms`);
await index.close();
db.close();
if (dir) rmSync(dir, { recursive: true, force: true });
