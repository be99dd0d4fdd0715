/**
 * The `hooks` section: the Claude Code hook route (`POST /hooks/claude-code`) through the
 * whole mesh, per event, one request at a time over keep-alive: a session per loop of
 * UserPromptSubmit → PostToolUse → Stop (every 10th loop a PreCompact / PostCompact pair and a
 * SessionStart compact), against a small seeded corpus. Latency is the client's, request sent
 * to body read. Every answer must be a 200 (an empty `{}` is counted apart: it is what a
 * request over the hook budget answers).
 */
import type { JsonClient } from './http';
import { summarize, type Summary } from './stats';

/** Per event: latency and how many answers were empty. */
export interface HookEventResult {
  latencyMs: Summary;
  /** Answers `{}` (for UserPromptSubmit and SessionStart, a sign of the budget running out). */
  empty: number;
}

/** What the section reports. */
export interface HooksResult {
  loops: number;
  events: Record<string, HookEventResult>;
}

const SEED: Record<string, string> = {
  'viking://resources/docs/deploy.md': '# Deploy\n\nWe deploy the gateway with blue/green releases.\n\n## Rollback\n\nSwitch traffic back to blue.',
  'viking://resources/docs/tests.md': '# Tests\n\nnpm test runs unit, integration and e2e tests against real Redis and NATS.',
  'viking://~/memories/preferences/style.md': 'Prefers small commits with a test per defect.',
  'viking://~/memories/events/2026/launch.md': '# Summary\nShipped the hook route for Claude Code.',
};

const PROMPTS = ['how do we roll back a deploy?', 'what does npm test run?', 'what shipped at launch?', 'which commit style do we prefer?'];

/** Run `loops` loops against the mesh behind `client`. */
export async function measureHooks(client: JsonClient, opts: { loops: number; log: (line: string) => void }): Promise<HooksResult> {
  for (const [uri, content] of Object.entries(SEED)) {
    const r = await client.send('POST', '/api/v1/content/write', { uri, content, wait: true });
    if (r.status !== 200) throw new Error(`seed write of ${uri} answered ${r.status}`);
  }
  const samples: Record<string, number[]> = {};
  const empty: Record<string, number> = {};
  const post = async (name: string, body: Record<string, unknown>) => {
    const t0 = process.hrtime.bigint();
    const r = await client.send('POST', '/hooks/claude-code', body);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 200) throw new Error(`${name} answered ${r.status}`);
    (samples[name] ??= []).push(ms);
    if (r.body && typeof r.body === 'object' && Object.keys(r.body).length === 0) empty[name] = (empty[name] ?? 0) + 1;
  };
  for (let i = 0; i < opts.loops; i++) {
    const common = { session_id: `bench-${i % 8}`, transcript_path: '/tmp/t.jsonl', cwd: '/home/dev/proj', permission_mode: 'default' };
    await post('UserPromptSubmit', { ...common, hook_event_name: 'UserPromptSubmit', prompt: PROMPTS[i % PROMPTS.length] });
    await post('PostToolUse', {
      ...common,
      hook_event_name: 'PostToolUse',
      tool_name: 'Read',
      tool_input: { file_path: `/home/dev/proj/src/f${i}.ts` },
      tool_response: { type: 'text', file: { filePath: `/home/dev/proj/src/f${i}.ts`, content: `export const x${i} = 1;\n${'// body\n'.repeat(40)}` } },
      tool_use_id: `toolu_${i}`,
    });
    await post('Stop', { ...common, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: `Done with step ${i}.` });
    if (i % 10 === 9) {
      await post('PreCompact', { ...common, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' });
      await post('PostCompact', { ...common, hook_event_name: 'PostCompact', trigger: 'auto', compact_summary: `Summary of steps up to ${i}.` });
      await post('SessionStart', { ...common, hook_event_name: 'SessionStart', source: 'compact' });
    }
  }
  const events: Record<string, HookEventResult> = {};
  for (const [name, xs] of Object.entries(samples)) events[name] = { latencyMs: summarize(xs), empty: empty[name] ?? 0 };
  opts.log(`hooks: ${Object.entries(events).map(([n, e]) => `${n} p50 ${e.latencyMs.p50.toFixed(2)} / p99 ${e.latencyMs.p99.toFixed(2)} ms`).join('; ')}`);
  return { loops: opts.loops, events };
}
