/** RewriteService.ExpandQuery over real gRPC, against a scripted provider on loopback. */
import { eventually } from '@ctxmesh/testing';
import { defaultSettings } from '../src';
import { modelSettings, startRewriteFixture, type RewriteFixture } from './fixture';
import { chatBody, ScriptedProvider } from './scripted-provider';

const MESSAGES = Array.from({ length: 7 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', text: `message number ${i}` }));
const BASE = { query: 'how did we fix it', messages: MESSAGES, archiveOverview: 'Session about the payments-api deploy.', timeoutMs: 5000 };

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

describe('RewriteService.ExpandQuery', () => {
  it('RewriteService.ExpandQuery - model plans queries with a repeat and a blank - OK used, original first, deduped, three at most', async () => {
    provider.script({
      kind: 'json',
      body: chatBody(
        JSON.stringify({ queries: ['how did we fix it', '  ', ' payments-api deploy fix ', 'payments-api rollback', 'a fourth one'] }),
      ),
    });
    const res = await fx.expandQuery(BASE);
    expect(res).toEqual({ status: 'used', queries: ['how did we fix it', 'payments-api deploy fix', 'payments-api rollback'], reason: '' });
  });

  it('RewriteService.ExpandQuery - any request - OK the prompt holds the last five messages, the overview and the query', async () => {
    provider.script({ kind: 'json', body: chatBody('{"queries": []}') });
    await fx.expandQuery(BASE);
    const body = provider.requests[0].body as { model: string; messages: Array<{ role: string; content: string }>; temperature: number };
    expect(body).toMatchObject({ model: 'test-model', temperature: 0, stream: false });
    const user = body.messages[1].content;
    for (let i = 2; i < 7; i++) expect(user).toContain(`message number ${i}`);
    expect(user).not.toContain('message number 1');
    expect(user).toContain('[assistant] message number 3');
    expect(user).toContain('Session about the payments-api deploy.');
    expect(user).toContain('Current query: how did we fix it');
  });

  it('RewriteService.ExpandQuery - model adds nothing - OK used with the original only', async () => {
    provider.script({ kind: 'json', body: chatBody('{"queries": []}') });
    expect(await fx.expandQuery(BASE)).toEqual({ status: 'used', queries: ['how did we fix it'], reason: '' });
  });

  it('RewriteService.ExpandQuery - model answers a fenced list instead of JSON - OK used with the listed queries', async () => {
    provider.script({ kind: 'json', body: chatBody('Here are the queries:\n1. payments-api deploy fix\n2. "rollback of payments-api"') });
    expect((await fx.expandQuery(BASE)).queries).toEqual(['how did we fix it', 'payments-api deploy fix', 'rollback of payments-api']);
  });

  it('RewriteService.ExpandQuery - provider slower than the fuse - OK failed with the original only, request aborted', async () => {
    provider.script({ kind: 'never' });
    const res = await fx.expandQuery({ ...BASE, timeoutMs: 150 });
    expect(res).toEqual({ status: 'failed', queries: ['how did we fix it'], reason: 'TIMEOUT' });
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.ExpandQuery - gRPC deadline shorter than the fuse - OK failed before the deadline, request aborted', async () => {
    provider.script({ kind: 'never' });
    const res = await fx.expandQuery({ ...BASE, timeoutMs: 5000 }, 2_000);
    expect(res.status).toBe('failed');
    expect(res.queries).toEqual(['how did we fix it']);
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.ExpandQuery - provider answers HTTP 500 - OK failed with the original only', async () => {
    provider.script({ kind: 'text', status: 500, text: 'boom' });
    expect(await fx.expandQuery(BASE)).toEqual({ status: 'failed', queries: ['how did we fix it'], reason: 'HTTP_500' });
  });

  it('RewriteService.ExpandQuery - provider answers without choices - OK failed', async () => {
    provider.script({ kind: 'json', body: { object: 'chat.completion', choices: [] } });
    expect(await fx.expandQuery(BASE)).toEqual({ status: 'failed', queries: ['how did we fix it'], reason: 'BAD_RESPONSE' });
  });

  it('RewriteService.ExpandQuery - no messages and no overview - OK off, no provider call', async () => {
    expect(await fx.expandQuery({ ...BASE, messages: [], archiveOverview: ' ' })).toEqual({
      status: 'off',
      queries: ['how did we fix it'],
      reason: 'NO_CONTEXT',
    });
    expect(provider.requests).toHaveLength(0);
  });
});

describe('RewriteService.ExpandQuery switched off', () => {
  it('RewriteService.ExpandQuery - CTXMESH_ENABLE_INTENT=false - OK off, no provider call', async () => {
    const p = await ScriptedProvider.start();
    const f = await startRewriteFixture(modelSettings(p.url, { enableIntent: false }));
    try {
      expect(await f.expandQuery(BASE)).toEqual({ status: 'off', queries: ['how did we fix it'], reason: 'INTENT_DISABLED' });
      expect(p.requests).toHaveLength(0);
    } finally {
      await f.close();
      await p.close();
    }
  });

  it('RewriteService.ExpandQuery - no model configured - OK off', async () => {
    const f = await startRewriteFixture(defaultSettings());
    try {
      expect(await f.expandQuery(BASE)).toEqual({ status: 'off', queries: ['how did we fix it'], reason: 'NOT_CONFIGURED' });
    } finally {
      await f.close();
    }
  });
});
