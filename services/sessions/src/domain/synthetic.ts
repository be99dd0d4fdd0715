import type { LogEvent } from './events';

/**
 * A synthetic coding-agent session of `n` events — a system prompt, then turns of user
 * question, tool call, tool result and answer, with an agent-instructions row every 50 turns —
 * the shape the session benchmarks (the service's own and `npm run bench`'s `sessions` section)
 * measure overflow recovery on.
 */
export function syntheticSession(n: number): LogEvent[] {
  const out: LogEvent[] = [{ type: 'system/message', content: [{ type: 'text', text: 'You are a coding agent.' }] }];
  let t = 0;
  while (out.length < n) {
    if (t % 50 === 49) out.push({ type: 'user/message', content: [{ type: 'text', text: `AGENTS.md rev ${t}` }], source: { kind: 'agent-instructions', changes: [{ scope: 'repo' }] } });
    out.push({ type: 'user/message', content: [{ type: 'text', text: `question ${t} ${'lorem ipsum dolor '.repeat(8)}` }] });
    out.push({ type: 'assistant/message', content: [{ type: 'text', text: 'reading' }, { type: 'tool-call', callId: `c${t}`, name: 'read_file', args: { path: `/src/f${t}.ts` } }] });
    out.push({ type: 'tool/result', callId: `c${t}`, content: [{ type: 'text', text: `export const x${t} = 1;\n${'// body\n'.repeat(20)}` }] });
    out.push({ type: 'assistant/message', content: [{ type: 'text', text: `answer ${t} 上下文 ${'sit amet '.repeat(10)}` }] });
    t++;
  }
  return out.slice(0, n);
}
