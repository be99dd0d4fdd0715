#!/usr/bin/env node
// Latency the digest rewrite adds, against a provider on loopback that answers instantly.
// Build first: `npx tsc -b services/rewrite`, then `node services/rewrite/scripts/digest-latency.mjs [runs]`.
// Prints medians (ms) of: a raw POST to the provider, the in-process handler (model and
// extractive engines), the RewriteDigest RPC over gRPC (model, extractive) and an RPC that
// makes no provider call (the gRPC floor), so the rewrite's own cost can be read off.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createHandlers, startRewrite, defaultSettings, chatCompletionsUrl } = require('../dist/index.js');
const { rewrite } = require('@ctxmesh/proto');
const { Budget, callUnary, connect } = require('@ctxmesh/rpc');
const pino = require('pino');

const RUNS = Number(process.argv[2] ?? 50);
const uris = Array.from({ length: 6 }, (_, i) => `viking://user/default/memories/events/e${i}.md`);
const texts = uris.map(
  (_, i) =>
    `# Summary\nRelease ${i} shipped the stdio MCP proxy and fixed the deployment. The rollback used kubectl rollout undo. ` +
    `Lunch was at noon. Entry ${i} also mentions Redis persistence with appendonly.`,
);
const rendered = uris.map((u, i) => `<memory uri="${u}" type="events" score="0.70" detail="full">\n${texts[i]}\n</memory>`).join('\n');
const answer = JSON.stringify({
  choices: [{ index: 0, message: { role: 'assistant', content: uris.map((u) => `- Shipped the proxy. source: ${u}`).join('\n') }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 400, completion_tokens: 60 },
});

const provider = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
});
await new Promise((r) => provider.listen(0, '127.0.0.1', r));
const providerUrl = `http://127.0.0.1:${provider.address().port}`;
const llm = { url: chatCompletionsUrl(providerUrl), apiKey: 'k', model: 'm' };
const req = { query: 'how was the deployment fixed', rendered, servedUris: uris, maxBullets: 6, timeoutMs: 30_000, sources: uris.map((uri, i) => ({ uri, text: texts[i] })), onlyIfModel: false };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
async function measure(name, fn) {
  for (let i = 0; i < 5; i++) await fn(); // warm-up: connection pools, JIT
  const xs = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  console.log(`${name.padEnd(44)} median ${median(xs).toFixed(2)} ms  (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}, n=${RUNS})`);
}

const ctx = () => ({ budget: Budget.ofMs(30_000), log: pino({ level: 'silent' }), metadata: undefined, requestId: 'bench' });
const withModel = createHandlers({ settings: defaultSettings({ llm }) });
const extractive = createHandlers({ settings: defaultSettings() });

await measure('raw POST to the provider (fetch)', async () => {
  const r = await fetch(llm.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await r.text();
});
await measure('handler in process, engine model', async () => {
  const c = ctx();
  const out = await withModel.rewriteDigest(req, c);
  c.budget.dispose();
  if (out.status !== 'ok') throw new Error(out.status);
});
await measure('handler in process, engine extractive', async () => {
  const out = await extractive.rewriteDigest(req, ctx());
  if (out.status !== 'ok') throw new Error(out.status);
});

const log = pino({ level: 'silent' });
const modelSrv = await startRewrite({ port: 0, log, settings: defaultSettings({ llm }) });
const extSrv = await startRewrite({ port: 0, log, settings: defaultSettings() });
const modelClient = connect(rewrite.RewriteServiceClient, modelSrv.address);
const extClient = connect(rewrite.RewriteServiceClient, extSrv.address);
const rpc = (client, r) => callUnary(client.rewriteDigest.bind(client), r, Budget.ofMs(30_000), { domain: 'rewrite' });

await measure('gRPC RewriteDigest, nothing served (floor)', () => rpc(modelClient, { ...req, servedUris: [], sources: [] }));
await measure('gRPC RewriteDigest, engine model', async () => {
  const out = await rpc(modelClient, req);
  if (out.status !== 'ok') throw new Error(out.status);
});
await measure('gRPC RewriteDigest, engine extractive', async () => {
  const out = await rpc(extClient, req);
  if (out.status !== 'ok') throw new Error(out.status);
});

modelClient.close();
extClient.close();
await modelSrv.shutdown();
await extSrv.shutdown();
provider.closeAllConnections();
provider.close();
