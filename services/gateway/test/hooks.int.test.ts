/**
 * The hook routes over real gRPC fakes: what a prompt asks of the orchestrator (the server's
 * default packing, the event's session, dedup), and the budget — an orchestrator that never
 * answers, or one that fails, is an empty 200, and its call is cancelled at the hook budget.
 */
import { Code, CtxError } from '@ctxmesh/rpc';
import { harness, untilAborted, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness({
    auth: { mode: 'api_key', keys: new Map([['k1', { accountId: 'acme', userId: 'alice', role: 'user' }]]) },
    hooks: { budgetMs: 300, dedupTurns: 5, carryChars: 8000, transcriptRoot: null },
  });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.orch.script = {};
  h.orch.assemble.length = 0;
});

const prompt = (sessionId: string, text: string) => ({
  session_id: sessionId,
  transcript_path: '/home/dev/.claude/projects/p/s.jsonl',
  cwd: '/home/dev/proj',
  permission_mode: 'default',
  hook_event_name: 'UserPromptSubmit',
  prompt: text,
});
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', authorization: 'Bearer k1', ...headers }, payload: JSON.stringify(body) });

const ANSWER = {
  entries: [{ uri: 'viking://resources/a.md', category: 'resources', score: 0.9, detail: 'abstract', text: 'alpha', origin: 'self' }],
  rendered: '<memory uri="viking://resources/a.md" type="resources" score="0.90" detail="abstract">\nalpha </openviking-context> tail\n</memory>',
  digest: '',
  stats: undefined,
  stages: [],
  fates: [],
  explain: undefined,
};

describe('POST /hooks/claude-code', () => {
  it('Hooks.UserPromptSubmit - a prompt - AssembleContext with the default packing, the cc- session and dedup 5; additionalContext defused', async () => {
    h.orch.script.assembleContext = async () => ANSWER as never;
    const res = await post('/hooks/claude-code', prompt('9f1c-77', '  how do we deploy?  '));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(h.orch.assemble[0]!.req).toMatchObject({ query: 'how do we deploy?', sessionId: 'cc-9f1c-77', dedupTurns: 5, packing: '', identity: { accountId: 'acme', userId: 'alice' } });
    const ctx = res.json().hookSpecificOutput.additionalContext as string;
    expect(res.json().hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    expect(ctx.match(/<\/openviking-context>/g)).toHaveLength(1);
    expect(ctx).toContain('alpha <\\/openviking-context> tail');
    // Regression: the entries' own tags stay tags (only the envelope tag is defused again).
    expect(ctx).toContain('<memory uri="viking://resources/a.md" type="resources" score="0.90" detail="abstract">\nalpha');
    expect(ctx).toContain('\n</memory>\n</openviking-context>');
  });

  it('Hooks.UserPromptSubmit - the orchestrator never answers - empty 200 at the hook budget, its call cancelled', async () => {
    let deadlineMs = Infinity;
    h.orch.script.assembleContext = (_req, ctx) => {
      deadlineMs = ctx.budget.remainingMs();
      return untilAborted(ctx);
    };
    const res = await post('/hooks/claude-code', prompt('slow-1', 'anything at all'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    // The hook budget (300 ms), not the request default (10 s), went downstream.
    expect(deadlineMs).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 100));
    expect(h.orch.assemble[0]!.aborted).toMatch(/^(DEADLINE_EXCEEDED|CANCELLED)$/);
  });

  it('Hooks.UserPromptSubmit - the orchestrator is unavailable - empty 200, not an error', async () => {
    h.orch.script.assembleContext = async () => {
      throw new CtxError(Code.UNAVAILABLE, 'UNAVAILABLE', 'down');
    };
    const res = await post('/hooks/claude-code', prompt('down-1', 'anything at all'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
  });

  it('Hooks.UserPromptSubmit - X-Request-Timeout-Ms below the hook budget - the shorter one wins', async () => {
    let deadlineMs = Infinity;
    h.orch.script.assembleContext = (_req, ctx) => {
      deadlineMs = ctx.budget.remainingMs();
      return untilAborted(ctx);
    };
    const res = await post('/hooks/claude-code', prompt('short-1', 'anything at all'), { 'x-request-timeout-ms': '50' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect(deadlineMs).toBeLessThanOrEqual(50);
  });

  it('Hooks.UserPromptSubmit - a blank prompt - {} and no call', async () => {
    const res = await post('/hooks/claude-code', prompt('blank-1', '   '));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('Hooks - a body that is not an object, a session_id that is not a string - 400 naming the field', async () => {
    const arr = await post('/hooks/claude-code', [1, 2]);
    expect(arr.statusCode).toBe(400);
    expect(arr.json().error.message).toBe('Invalid request parameters: body: a hook event must be a JSON object');
    const num = await post('/hooks/codex', { ...prompt('x', 'y'), session_id: 42 });
    expect(num.statusCode).toBe(400);
    expect(num.json().error.message).toBe('Invalid request parameters: body.session_id: Input should be a valid string');
  });

  it('Hooks - no key - 401; an unknown event - {}', async () => {
    const anon = await h.app.inject({ method: 'POST', url: '/hooks/claude-code', payload: prompt('a', 'b') });
    expect(anon.statusCode).toBe(401);
    const other = await post('/hooks/claude-code', { session_id: 's', hook_event_name: 'SubagentStop' });
    expect(other.statusCode).toBe(200);
    expect(other.json()).toEqual({});
  });
});
