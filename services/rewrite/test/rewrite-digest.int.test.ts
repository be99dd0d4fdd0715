/** RewriteService.RewriteDigest over real gRPC, against a scripted provider on loopback. */
import { eventually } from '@ctxmesh/testing';
import { defaultSettings } from '../src';
import { modelSettings, startRewriteFixture, type RewriteFixture } from './fixture';
import { chatBody, ScriptedProvider } from './scripted-provider';

const LAUNCH = 'viking://user/default/memories/events/2026/07/14/launch.md';
const STYLE = 'viking://user/default/memories/preferences/style.md';
const RENDERED =
  `<memory uri="${LAUNCH}" type="events" score="0.71" detail="full">\n# Summary\nShipped the stdio MCP proxy.\n</memory>\n` +
  `<memory uri="${STYLE}" type="preferences" score="0.48" detail="abstract">\nPrefers TypeScript strict mode.\n</memory>`;
const BASE = {
  query: 'what shipped',
  rendered: RENDERED,
  servedUris: [LAUNCH, STYLE],
  maxBullets: 6,
  timeoutMs: 30_000,
  sources: [
    { uri: LAUNCH, text: '# Summary\nShipped the stdio MCP proxy.' },
    { uri: STYLE, text: 'Prefers TypeScript strict mode.' },
  ],
  onlyIfModel: false,
};

let provider: ScriptedProvider;
let fx: RewriteFixture;
beforeAll(async () => {
  provider = await ScriptedProvider.start();
  fx = await startRewriteFixture(modelSettings(provider.url));
});
afterEach(() => provider.reset());
afterAll(async () => {
  await fx.close();
  await provider.close();
});

describe('RewriteService.RewriteDigest with a model', () => {
  it('RewriteService.RewriteDigest - model answers two cited bullets - OK ok with digest and provider usage', async () => {
    provider.script({
      kind: 'json',
      body: chatBody(`- Shipped the stdio MCP proxy. source: ${LAUNCH}\n* Prefers strict TypeScript. 来源：${STYLE}`, {
        prompt_tokens: 321,
        completion_tokens: 42,
      }),
    });
    const res = await fx.rewriteDigest(BASE);
    expect(res).toEqual({
      status: 'ok',
      digest: `OpenViking memory digest:\n- Shipped the stdio MCP proxy. source: ${LAUNCH}\n- Prefers strict TypeScript. 来源：${STYLE}`,
      usage: { promptTokens: 321, completionTokens: 42 },
      engine: 'model',
    });
  });

  it('RewriteService.RewriteDigest - any request - OK sends one POST with model, system+user messages, temperature 0, no stream', async () => {
    provider.script({ kind: 'json', body: chatBody(`- x source: ${LAUNCH}`) });
    await fx.rewriteDigest({ ...BASE, maxBullets: 4 });
    expect(provider.requests).toHaveLength(1);
    const [req] = provider.requests;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-test');
    expect(req.headers['content-type']).toBe('application/json');
    const body = req.body as { model: string; messages: Array<{ role: string; content: string }>; temperature: number; stream: boolean };
    expect(Object.keys(body).sort()).toEqual(['messages', 'model', 'stream', 'temperature']);
    expect(body).toMatchObject({ model: 'test-model', temperature: 0, stream: false });
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const user = body.messages[1].content;
    expect(user).toContain('Query: what shipped');
    expect(user).toContain(RENDERED);
    expect(user).toContain('at most 4 bullets');
    expect(user).toContain('NO_RELEVANT_MEMORY');
  });

  it('RewriteService.RewriteDigest - a bullet cites an invented URI - OK the bullet is dropped, the rest kept', async () => {
    provider.script({
      kind: 'json',
      body: chatBody(
        `- Shipped the proxy. source: ${LAUNCH}\n- Made up. source: viking://user/default/memories/events/invented.md\n` +
          `- Trailing dot fails the allowlist. source: ${LAUNCH}.\n- No citation at all.`,
      ),
    });
    const res = await fx.rewriteDigest(BASE);
    expect(res.status).toBe('ok');
    expect(res.digest).toBe(`OpenViking memory digest:\n- Shipped the proxy. source: ${LAUNCH}`);
  });

  it('RewriteService.RewriteDigest - every bullet cites an invented URI - OK failed, no digest, usage of the call kept', async () => {
    provider.script({
      kind: 'json',
      body: chatBody('- Made up. source: viking://user/default/memories/events/invented.md', { prompt_tokens: 10, completion_tokens: 3 }),
    });
    const res = await fx.rewriteDigest(BASE);
    expect(res).toEqual({ status: 'failed', digest: '', engine: 'model', usage: { promptTokens: 10, completionTokens: 3 } });
  });

  it.each([['NO_RELEVANT_MEMORY'], ['  no_relevant_memory \n'], ['No_Relevant_Memory'], [`<think>\n- draft source: ${LAUNCH}\n</think>\nNO_RELEVANT_MEMORY`]])(
    'RewriteService.RewriteDigest - model answers %j - OK no_relevant',
    async (content) => {
      provider.script({ kind: 'json', body: chatBody(content) });
      const res = await fx.rewriteDigest(BASE);
      expect(res).toMatchObject({ status: 'no_relevant', digest: '', engine: 'model' });
    },
  );

  it('RewriteService.RewriteDigest - NO_RELEVANT_MEMORY inside a longer answer - OK failed (only the whole output counts)', async () => {
    provider.script({ kind: 'json', body: chatBody('NO_RELEVANT_MEMORY.\nNothing matched.') });
    expect(await fx.rewriteDigest(BASE)).toMatchObject({ status: 'failed', digest: '' });
  });

  it('RewriteService.RewriteDigest - more bullets than max_bullets - OK only the first max_bullets kept', async () => {
    const lines = Array.from({ length: 5 }, (_, i) => `- fact ${i} source: ${LAUNCH}`).join('\n');
    provider.script({ kind: 'json', body: chatBody(lines) });
    const res = await fx.rewriteDigest({ ...BASE, maxBullets: 2 });
    expect(res.digest).toBe(`OpenViking memory digest:\n- fact 0 source: ${LAUNCH}\n- fact 1 source: ${LAUNCH}`);
  });

  it('RewriteService.RewriteDigest - provider sends no usage - OK ok without usage', async () => {
    provider.script({ kind: 'json', body: chatBody(`- a source: ${LAUNCH}`, null) });
    const res = await fx.rewriteDigest(BASE);
    expect(res.status).toBe('ok');
    expect(res.usage).toBeUndefined();
  });

  it.each([
    ['HTTP 500', { kind: 'text' as const, status: 500, text: 'upstream exploded' }],
    ['HTTP 429', { kind: 'json' as const, status: 429, body: { error: { message: 'rate limited' } } }],
    ['a body that is not JSON', { kind: 'text' as const, text: '<html>gateway</html>' }],
    ['JSON without choices', { kind: 'json' as const, body: { id: 'x', object: 'chat.completion' } }],
    ['a choice with null content', { kind: 'json' as const, body: { choices: [{ index: 0, message: { role: 'assistant', content: null } }] } }],
  ])('RewriteService.RewriteDigest - provider answers %s - OK failed, no usage', async (_name, answer) => {
    provider.script(answer);
    const res = await fx.rewriteDigest(BASE);
    expect(res).toEqual({ status: 'failed', digest: '', engine: 'model' });
  });

  it('RewriteService.RewriteDigest - prose without bullets - OK failed', async () => {
    provider.script({ kind: 'json', body: chatBody(`The proxy shipped (see ${LAUNCH}).`) });
    expect(await fx.rewriteDigest(BASE)).toMatchObject({ status: 'failed', digest: '', engine: 'model' });
  });

  it('RewriteService.RewriteDigest - provider slower than timeout_ms - OK timeout, and the provider request is aborted', async () => {
    provider.script({ kind: 'never' });
    const res = await fx.rewriteDigest({ ...BASE, timeoutMs: 200 });
    expect(res).toEqual({ status: 'timeout', digest: '', engine: 'model' });
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.RewriteDigest - gRPC deadline shorter than the fuse - OK timeout before the deadline, provider request aborted', async () => {
    provider.script({ kind: 'never' });
    // timeout_ms and the service fuse allow 30 s; only the call's deadline bounds it.
    const res = await fx.rewriteDigest({ ...BASE, timeoutMs: 30_000 }, 2_000);
    expect(res.status).toBe('timeout');
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.RewriteDigest - provider answers slowly, still inside the fuse - OK ok', async () => {
    provider.script({ kind: 'json', body: chatBody(`- late but fine source: ${LAUNCH}`), delayMs: 100 });
    const res = await fx.rewriteDigest({ ...BASE, timeoutMs: 10_000 });
    expect(res.status).toBe('ok');
    expect(provider.requests[0].aborted).toBe(false);
  });

  it('RewriteService.RewriteDigest - nothing served - OK off, no provider call', async () => {
    const res = await fx.rewriteDigest({ ...BASE, servedUris: [], sources: [] });
    expect(res).toEqual({ status: 'off', digest: '', engine: '' });
    expect(provider.requests).toHaveLength(0);
  });

  it('RewriteService.RewriteDigest - rendered blank (render=false) - OK the prompt carries the sources with their URIs', async () => {
    provider.script({ kind: 'json', body: chatBody(`- a source: ${STYLE}`) });
    await fx.rewriteDigest({ ...BASE, rendered: '' });
    const user = (provider.requests[0].body as { messages: Array<{ content: string }> }).messages[1].content;
    expect(user).toContain(`<memory uri="${STYLE}">\nPrefers TypeScript strict mode.\n</memory>`);
  });
});

describe('RewriteService.RewriteDigest fuses', () => {
  it('RewriteService.RewriteDigest - the service fuse is shorter than timeout_ms - OK timeout at the service fuse', async () => {
    const p = await ScriptedProvider.start();
    const f = await startRewriteFixture(modelSettings(p.url, { rewriteTimeoutMs: 150 }));
    try {
      p.script({ kind: 'never' });
      const res = await f.rewriteDigest({ ...BASE, timeoutMs: 20_000 }, 20_000);
      expect(res.status).toBe('timeout');
      await eventually(() => p.requests[0]?.aborted);
    } finally {
      await f.close();
      await p.close();
    }
  });

  it('RewriteService.RewriteDigest - provider unreachable - OK failed', async () => {
    const p = await ScriptedProvider.start();
    const url = p.url;
    await p.close();
    const f = await startRewriteFixture(modelSettings(url));
    try {
      expect(await f.rewriteDigest(BASE)).toEqual({ status: 'failed', digest: '', engine: 'model' });
    } finally {
      await f.close();
    }
  });
});

describe('RewriteService.RewriteDigest without a model', () => {
  let nofx: RewriteFixture;
  beforeAll(async () => {
    nofx = await startRewriteFixture(defaultSettings());
  });
  afterAll(() => nofx.close());

  it('RewriteService.RewriteDigest - only_if_model and no model - OK off', async () => {
    expect(await nofx.rewriteDigest({ ...BASE, onlyIfModel: true })).toEqual({ status: 'off', digest: '', engine: '' });
  });

  it('RewriteService.RewriteDigest - English entries, no model - OK extractive digest citing served URIs', async () => {
    const served = ['viking://resources/docs/deploy.md', 'viking://user/default/memories/events/outage.md', 'viking://resources/docs/lunch.md'];
    const req = {
      query: 'which command fixed the failed deployment',
      rendered: '',
      servedUris: served,
      maxBullets: 3,
      sources: [
        { uri: served[0], text: '# Deploy\nDeploys run from CI. The failed deployment was fixed with kubectl rollout undo. Nobody was paged.' },
        { uri: served[1], text: 'The outage lasted an hour. The command that fixed it was a rollback of the deployment.' },
        { uri: served[2], text: 'We had lunch outside. The weather was nice.' },
      ],
    };
    const res = await nofx.rewriteDigest(req);
    expect(res.status).toBe('ok');
    expect(res.engine).toBe('extractive');
    expect(res.usage).toBeUndefined();
    const lines = res.digest.split('\n');
    expect(lines[0]).toBe('OpenViking memory digest:');
    const bullets = lines.slice(1);
    expect(bullets.length).toBeGreaterThan(0);
    expect(bullets.length).toBeLessThanOrEqual(3);
    for (const b of bullets) {
      const cite = /source: (viking:\/\/\S+)$/.exec(b);
      expect(cite).not.toBeNull();
      expect(served).toContain(cite![1]);
    }
    // Both sentences that say how the deployment was fixed, in score order; the lunch entry shares nothing.
    expect(bullets).toEqual([
      `- The command that fixed it was a rollback of the deployment. source: ${served[1]}`,
      `- The failed deployment was fixed with kubectl rollout undo. source: ${served[0]}`,
    ]);
    expect(res.digest).not.toContain('lunch');
    expect(await nofx.rewriteDigest(req)).toEqual(res);
  });

  it('RewriteService.RewriteDigest - Chinese entries, no model - OK extractive digest with 来源 citations', async () => {
    const served = ['viking://user/default/memories/events/部署.md', 'viking://user/default/memories/events/午饭.md'];
    const res = await nofx.rewriteDigest({
      query: '部署失败是怎么修复的',
      servedUris: served,
      maxBullets: 2,
      sources: [
        { uri: served[0], text: '周五发布。部署失败后，我们通过回滚镜像修复了问题！之后补了监控。' },
        { uri: served[1], text: '今天天气很好，我们去公园散步。' },
      ],
    });
    expect(res.status).toBe('ok');
    expect(res.engine).toBe('extractive');
    expect(res.digest).toBe(`OpenViking memory digest:\n- 部署失败后，我们通过回滚镜像修复了问题！ 来源：${served[0]}`);
  });

  it('RewriteService.RewriteDigest - no sentence shares anything with the query - OK failed (rendered kept, never no_relevant)', async () => {
    const res = await nofx.rewriteDigest({
      query: 'kubernetes rollback',
      servedUris: ['viking://resources/a.md'],
      maxBullets: 3,
      sources: [{ uri: 'viking://resources/a.md', text: 'We had lunch outside. The weather was nice.' }],
    });
    expect(res).toEqual({ status: 'failed', digest: '', engine: 'extractive' });
  });
});
