/**
 * overflow-recovery §3.5 item 13, end to end on the wire: a scripted model provider on
 * loopback (real HTTP, port 0) refuses a chat request that is too long with an
 * OpenAI-style 400 `context_length_exceeded`; a small harness loop (append events → project
 * the surface → POST to the provider → on a context-length error call RecoverOverflow →
 * project again → retry) drives the real sessions service over gRPC, on the embedded file
 * and on Redis. The retried request body must no longer contain the hidden originals and must
 * contain the engine marker; the originals stay reachable through SearchContext and Decompress.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { sessions } from '@ctxmesh/proto';
import { CONTEXT_WINDOW_EXCEEDED, ENGINE_SUMMARY_LEAD, SUMMARY_FRAME_PREFIX } from '../src';
import { assistant, conversation, user } from '../src/domain/__tests__/fixtures';
import { embeddedFixture, redisClient, redisFixture, serveSessions, wire, type SessionsApi, type SessionsHarness, type StoreFixture } from './sessions-harness';

// ---------------------------------------------------------------------------------------------
// The scripted provider

/** An OpenAI-style chat message. */
interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** What the provider received and answered. */
interface Exchange {
  body: string;
  status: number;
}

/** A fake OpenAI-compatible provider: refuses any request whose message text exceeds `maxChars`. */
class ScriptedProvider {
  readonly exchanges: Exchange[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly maxChars: number) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const parsed = JSON.parse(body) as { messages: ChatMessage[] };
        const chars = parsed.messages.reduce((n, m) => n + m.content.length + (m.tool_calls ?? []).reduce((k, c) => k + c.function.arguments.length, 0), 0);
        const tooLong = chars > this.maxChars;
        const status = tooLong ? 400 : 200;
        this.exchanges.push({ body, status });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            tooLong
              ? {
                  error: {
                    message: `This model's maximum context length is ${this.maxChars} tokens. However, your messages resulted in ${chars} tokens. Please reduce the length of the messages.`,
                    type: 'invalid_request_error',
                    param: 'messages',
                    code: 'context_length_exceeded',
                  },
                }
              : { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Recovered: here is the answer.' }, finish_reason: 'stop' }] },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/chat/completions`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.server.close((e) => (e ? reject(e) : resolve())));
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// The harness loop

/** The projected surface as an OpenAI chat request: split tool calls regroup per seq. */
function chatRequest(messages: readonly sessions.SurfaceMessage[]): { model: string; messages: ChatMessage[] } {
  const out: ChatMessage[] = [];
  let lastSeq = -1;
  for (const m of messages) {
    if (m.role === 'assistant' && m.toolCallId !== '') {
      const call = { id: m.toolCallId, type: 'function' as const, function: { name: m.toolName, arguments: m.toolArgs } };
      const prev = out[out.length - 1];
      if (m.seq === lastSeq && prev?.tool_calls) prev.tool_calls.push(call);
      else out.push({ role: 'assistant', content: m.text, tool_calls: [call] });
    } else if (m.role === 'tool') out.push({ role: 'tool', content: m.text, tool_call_id: m.toolCallId });
    else out.push({ role: m.role as ChatMessage['role'], content: m.text });
    lastSeq = m.seq;
  }
  return { model: 'scripted-model', messages: out };
}

/** A context-length refusal, as providers word it. */
function isContextLengthError(status: number, body: unknown): boolean {
  const e = (body as { error?: { code?: string; message?: string } }).error;
  return status === 400 && (e?.code === 'context_length_exceeded' || /maximum context length/i.test(e?.message ?? ''));
}

/** The original provider error surfaced to the user when recovery declines. */
class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    message: string,
    readonly recovery: sessions.RecoverOverflowResponse,
  ) {
    super(message);
  }
}

/**
 * One model turn the way a harness runs it: project, send, and on a context-length refusal
 * ask the service to recover; retry only when it answers `retry`.
 */
async function runTurn(api: SessionsApi, sessionId: string, providerUrl: string, agentId: string, turnId: string): Promise<{ attempts: number; recoveries: sessions.RecoverOverflowResponse[] }> {
  const recoveries: sessions.RecoverOverflowResponse[] = [];
  for (let attempt = 1; ; attempt++) {
    const surface = await api.projectSurface({ sessionId, window: { contextTokens: 8192, reservedOutputTokens: 1024 } });
    const res = await fetch(providerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatRequest(surface.messages)) });
    const body = (await res.json()) as { choices?: Array<{ message: { content: string } }>; error?: { message: string } };
    if (res.ok) {
      await api.appendEvents({ sessionId, agentId, events: [wire(assistant(body.choices![0]!.message.content))] });
      return { attempts: attempt, recoveries };
    }
    if (!isContextLengthError(res.status, body)) throw new Error(`provider failed: ${res.status}`);
    const rec = await api.recoverOverflow({
      sessionId,
      requestId: `${turnId}-${attempt}`,
      agentId,
      failure: { code: CONTEXT_WINDOW_EXCEEDED, message: body.error!.message },
      route: { provider: 'scripted', model: 'scripted-model' },
      window: { contextTokens: 8192, reservedOutputTokens: 1024 },
    });
    recoveries.push(rec);
    if (rec.action !== 'retry') throw new ProviderError(body.error!.message, rec);
  }
}

/** Every `uid<n>u` marker of a text (the fixtures put a unique one in every message). */
const uids = (text: string) => text.match(/uid\d+u/g) ?? [];

// ---------------------------------------------------------------------------------------------

let redis: Redis;
beforeAll(() => {
  redis = redisClient();
});
afterAll(async () => {
  await redis.quit();
});

function describeEndToEnd(name: string, open: () => StoreFixture) {
  describe(`overflow recovery end to end on ${name}`, () => {
    let fx: StoreFixture;
    let h: SessionsHarness;
    let provider: ScriptedProvider;
    let sid: string;
    beforeEach(async () => {
      fx = open();
      h = await serveSessions(fx.store);
      sid = `e2e-${randomUUID()}`;
    });
    afterEach(async () => {
      await provider.stop();
      await h.close();
      await fx.dispose();
    });

    it('SessionsService.RecoverOverflow - provider refuses the first request as too long - OK the retried body drops the hidden originals and carries the marker', async () => {
      provider = new ScriptedProvider(4000);
      await provider.start();
      await h.api.appendEvents({ sessionId: sid, agentId: 'agent-1', events: [...conversation(12, 200), user('final question uid999u')].map(wire) });

      const turn = await runTurn(h.api, sid, provider.url, 'agent-1', 'turn-1');

      expect(turn.attempts).toBe(2);
      expect(provider.exchanges.map((x) => x.status)).toEqual([400, 200]);
      const [rec] = turn.recoveries;
      expect(rec).toMatchObject({ action: 'retry', reason: 'compacted', budget: { used: 1, max: 1 } });
      const block = rec!.block!;

      // The originals the block hides, read back through Decompress (paged), with their markers.
      const hidden: sessions.OriginalItem[] = [];
      for (let offset: number | undefined = 0; offset !== undefined; ) {
        const page: sessions.DecompressResponse = await h.api.decompress({ sessionId: sid, ref: block.blockId, offset });
        hidden.push(...page.items);
        offset = page.nextOffset;
      }
      expect(hidden).toHaveLength(block.hiddenCount);
      const hiddenUids = hidden.flatMap((i) => uids(i.text));
      expect(hiddenUids.length).toBeGreaterThan(10);

      const [first, retried] = provider.exchanges.map((x) => x.body);
      // The refused request carried every original; the retried one carries none of the hidden.
      for (const u of hiddenUids) expect(first).toContain(u);
      for (const u of hiddenUids) expect(retried).not.toContain(u);
      // What stays: the system prompt, the protected tail and the last real user turn.
      expect(retried).toContain('You are a coding agent.');
      expect(retried).toContain('final question uid999u');
      // The marker is there once, engine-written, with the true count, and no model frame.
      const retriedBody = JSON.parse(retried!) as { messages: ChatMessage[] };
      const markers = retriedBody.messages.filter((m) => m.content.startsWith(ENGINE_SUMMARY_LEAD));
      expect(markers).toHaveLength(1);
      expect(markers[0]!.role).toBe('user');
      expect(markers[0]!.content).toContain(`${block.hiddenCount} surface message(s)`);
      expect(retried).not.toContain(SUMMARY_FRAME_PREFIX.slice(1, 30));
      // Tool pairing survived on the wire: every tool message answers a call sent before it.
      const sentCalls = new Set<string>();
      for (const m of retriedBody.messages) {
        for (const c of m.tool_calls ?? []) sentCalls.add(c.id);
        if (m.role === 'tool') expect(sentCalls.has(m.tool_call_id!)).toBe(true);
      }
      expect(retried!.length).toBeLessThan(first!.length);

      // The originals are still found by SearchContext, owned by the block.
      for (const item of [hidden[0]!, hidden[hidden.length - 1]!]) {
        const u = uids(item.text)[0]!;
        const hits = (await h.api.searchContext({ sessionId: sid, query: u, limit: 3 })).hits;
        expect(hits[0]).toMatchObject({ kind: 'message', blockId: block.blockId, seq: item.seq });
      }
      // The model's answer landed and, being progress, reset the agent's budget.
      const status = await h.api.getStatus({ sessionId: sid });
      expect(status.budgets).toEqual([]);
      expect(status.blocks).toHaveLength(1);
    });

    it('SessionsService.RecoverOverflow - one reduction is not enough - the original error surfaces after one retry and nothing more is hidden', async () => {
      provider = new ScriptedProvider(300);
      await provider.start();
      await h.api.appendEvents({ sessionId: sid, events: [...conversation(12, 200), user('final question uid999u')].map(wire) });

      const err = await runTurn(h.api, sid, provider.url, 'agent-1', 'turn-1').then(
        () => null,
        (e: unknown) => e,
      );

      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).message).toMatch(/maximum context length is 300 tokens/);
      expect((err as ProviderError).recovery).toMatchObject({ action: 'surface_error', reason: 'budget_spent', budget: { used: 1, max: 1 } });
      expect(provider.exchanges.map((x) => x.status)).toEqual([400, 400]);
      expect((await h.api.getStatus({ sessionId: sid })).blocks).toHaveLength(1);
    });
  });
}

describeEndToEnd('the embedded SQLite file', embeddedFixture);
describeEndToEnd('Redis', () => redisFixture(redis));
