/** RewriteService.RewriteQuery over real gRPC, against a scripted provider on loopback. */
import { eventually } from '@ctxmesh/testing';
import { defaultSettings } from '../src';
import { modelSettings, startRewriteFixture, type RewriteFixture } from './fixture';
import { chatBody, ScriptedProvider } from './scripted-provider';

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

describe('RewriteService.RewriteQuery', () => {
  it('RewriteService.RewriteQuery - model proposes alternatives - OK ok, original first, three at most', async () => {
    provider.script({ kind: 'json', body: chatBody('```json\n{"queries": ["k8s rollback command", "kubectl rollout undo", "extra"]}\n```') });
    const res = await fx.rewriteQuery({ query: 'how to roll back a deploy', timeoutMs: 6000 });
    expect(res).toEqual({ queries: ['how to roll back a deploy', 'k8s rollback command', 'kubectl rollout undo'], status: 'ok' });
    const body = provider.requests[0].body as { messages: Array<{ content: string }> };
    expect(body.messages[1].content).toContain('Query: how to roll back a deploy');
    expect(body.messages[1].content).toContain('at most 2 alternative search queries');
  });

  it('RewriteService.RewriteQuery - provider slower than timeout_ms - OK timeout with the original only, request aborted', async () => {
    provider.script({ kind: 'never' });
    expect(await fx.rewriteQuery({ query: 'q', timeoutMs: 150 })).toEqual({ queries: ['q'], status: 'timeout' });
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.RewriteQuery - provider answers HTTP 503 - OK failed with the original only', async () => {
    provider.script({ kind: 'text', status: 503, text: 'overloaded' });
    expect(await fx.rewriteQuery({ query: 'q', timeoutMs: 6000 })).toEqual({ queries: ['q'], status: 'failed' });
  });

  it('RewriteService.RewriteQuery - no model configured - OK off with the original only', async () => {
    const f = await startRewriteFixture(defaultSettings());
    try {
      expect(await f.rewriteQuery({ query: 'q', timeoutMs: 6000 })).toEqual({ queries: ['q'], status: 'off' });
    } finally {
      await f.close();
    }
  });
});
