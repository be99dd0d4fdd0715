import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { thrownBy } from '@ctxmesh/testing';
import { RequestValidationError } from './errors';
import { capText, HOOK_MAIN_AGENT, hookSessionId, lastAssistantText, transcriptPathUnder, validateHookEvent } from './hooks';

describe('hookSessionId', () => {
  it('prefixes cc- or cx- and replaces characters outside [A-Za-z0-9._-] as the Codex plugin does', () => {
    expect(hookSessionId('claude-code', '3f2a9c1e-1b2c-4d5e-8f90-123456789abc')).toBe('cc-3f2a9c1e-1b2c-4d5e-8f90-123456789abc');
    expect(hookSessionId('codex', 'codex:123')).toBe('cx-codex_123');
    expect(hookSessionId('codex', 'x'.repeat(400))).toHaveLength(256);
  });
});

describe('validateHookEvent', () => {
  const base = { session_id: 's1', transcript_path: '/t.jsonl', cwd: '/p' };

  it('reads each handled event into its kind and ignores unknown keys', () => {
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'hi', prompt_id: 'p1', effort: 'high' })).toEqual({
      kind: 'prompt', prompt: 'hi', harnessSessionId: 's1', sessionId: 'cc-s1', eventName: 'UserPromptSubmit', transcriptPath: '/t.jsonl', agentId: HOOK_MAIN_AGENT,
    });
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'SessionStart', source: 'compact' })).toMatchObject({ kind: 'session-start', source: 'compact' });
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'PostCompact', trigger: 'manual', compact_summary: 'S' })).toMatchObject({ kind: 'post-compact', trigger: 'manual', compactSummary: 'S' });
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' })).toMatchObject({ kind: 'pre-compact', customInstructions: '' });
    expect(validateHookEvent('codex', { ...base, hook_event_name: 'Stop', stop_hook_active: false })).toMatchObject({ kind: 'stop', lastAssistantMessage: null, sessionId: 'cx-s1' });
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'Notification', message: 'm' })).toMatchObject({ kind: 'ignored' });
  });

  it('takes a subagent agent_id, and falls back to the main agent for one that is not an id', () => {
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'Stop', agent_id: 'sub-1' }).agentId).toBe('sub-1');
    expect(validateHookEvent('claude-code', { ...base, hook_event_name: 'Stop', agent_id: 'a b/c' }).agentId).toBe(HOOK_MAIN_AGENT);
  });

  it('keeps a Read tool response readable: the file path and its content, else the JSON', () => {
    const read = validateHookEvent('claude-code', { ...base, hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: {}, tool_response: { type: 'text', file: { filePath: '/a.md', content: 'body' } } });
    expect(read).toMatchObject({ kind: 'tool-use', toolResponse: '/a.md\nbody' });
    const bash = validateHookEvent('claude-code', { ...base, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_response: { stdout: 'ok', stderr: '' } });
    expect(bash).toMatchObject({ toolResponse: '{"stdout":"ok","stderr":""}' });
  });

  it('refuses a body that is not an object, a missing or blank session id, a prompt event without its prompt — naming each field', () => {
    const e1 = thrownBy(() => validateHookEvent('claude-code', 'x'));
    expect(e1).toBeInstanceOf(RequestValidationError);
    const e2 = thrownBy(() => validateHookEvent('claude-code', { hook_event_name: 7, session_id: '  ' })) as RequestValidationError;
    expect(e2.issues.map((i) => i.loc.join('.'))).toEqual(['body.hook_event_name', 'body.session_id']);
    const e3 = thrownBy(() => validateHookEvent('claude-code', { ...base, hook_event_name: 'UserPromptSubmit' })) as RequestValidationError;
    expect(e3.message).toBe('Invalid request parameters: body.prompt: Field required');
    const e4 = thrownBy(() => validateHookEvent('claude-code', { ...base, hook_event_name: 'PostToolUse' })) as RequestValidationError;
    expect(e4.message).toBe('Invalid request parameters: body.tool_name: Field required');
  });
});

describe('capText', () => {
  it('keeps a short text and cuts a long one with a note of the rest', () => {
    expect(capText('abc', 5)).toBe('abc');
    expect(capText('abcdefgh', 5)).toBe('abcde\n[… 3 more characters not captured]');
  });
});

describe('transcriptPathUnder', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hooks-root-')));
  it('accepts a file inside the root and refuses the root itself, a sibling sharing its prefix, a parent, a relative path', () => {
    expect(transcriptPathUnder(root, join(root, 'a', 'b.jsonl'))).toBe(true);
    expect(transcriptPathUnder(root, root)).toBe(false);
    expect(transcriptPathUnder(root, `${root}-other/b.jsonl`)).toBe(false);
    expect(transcriptPathUnder(root, join(root, '..'))).toBe(false);
    expect(transcriptPathUnder(root, 'a/b.jsonl')).toBe(false);
  });
});

describe('lastAssistantText', () => {
  it('returns the newest assistant text of a transcript tail, skipping cut and foreign lines', () => {
    const tail = [
      'nt":"cut first line"}}',
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'older' }] } }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'newest' }, { type: 'tool_use', name: 'Read' }] } }),
      JSON.stringify({ type: 'user', message: { content: 'q' } }),
      '',
    ].join('\n');
    expect(lastAssistantText(tail)).toBe('newest');
    expect(lastAssistantText('{"type":"user"}\n')).toBeNull();
  });
});
