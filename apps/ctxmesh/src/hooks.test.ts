import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeHooks, codexHooks, forwardHook, hooksCommand, mergeHooks, writeHooksFile } from './hooks';

describe('claudeHooks', () => {
  it('one http hook per event to <url>/hooks/claude-code, the key from the environment through allowedEnvVars', () => {
    const h = claudeHooks('127.0.0.1:1933/');
    expect(Object.keys(h)).toEqual(['UserPromptSubmit', 'SessionStart', 'PreCompact', 'PostCompact', 'Stop', 'PostToolUse']);
    expect(h.UserPromptSubmit).toEqual([
      { hooks: [{ type: 'http', url: 'http://127.0.0.1:1933/hooks/claude-code', headers: { Authorization: 'Bearer $CTXMESH_API_KEY' }, allowedEnvVars: ['CTXMESH_API_KEY'], timeout: 5 }] },
    ]);
    expect(h.SessionStart![0]!.matcher).toBe('resume|compact');
    expect(h.PostToolUse![0]!.matcher).toBe('*');
    expect(JSON.stringify(claudeHooks('http://h:1', { keyEnv: 'MY_KEY' }))).toContain('"Bearer $MY_KEY"');
    expect(() => claudeHooks('http://h:1', { keyEnv: 'A B' })).toThrow('--key-env');
  });
});

describe('mergeHooks', () => {
  it('keeps other settings, events and hooks; replaces earlier ctxmesh hooks instead of adding twins', () => {
    const settings = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test)'] },
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
        Notification: [{ matcher: '', hooks: [{ type: 'command', command: 'notify' }] }],
      },
    };
    const once = mergeHooks(settings, claudeHooks('http://127.0.0.1:1933'));
    const twice = mergeHooks(once, claudeHooks('http://127.0.0.1:2000'));
    expect(twice.model).toBe('opus');
    expect(twice.permissions).toEqual({ allow: ['Bash(npm test)'] });
    const hooks = twice.hooks as Record<string, Array<{ hooks: Array<{ url?: string; command?: string }> }>>;
    expect(hooks.Notification).toEqual(settings.hooks.Notification);
    expect(hooks.Stop).toHaveLength(2);
    expect(hooks.Stop![0]!.hooks[0]!.command).toBe('say done');
    expect(hooks.Stop![1]!.hooks[0]!.url).toBe('http://127.0.0.1:2000/hooks/claude-code');
    expect(hooks.UserPromptSubmit).toHaveLength(1);
  });

  it('refuses a hooks value of another shape', () => {
    expect(() => mergeHooks({ hooks: [] }, claudeHooks('http://h:1'))).toThrow('not an object');
    expect(() => mergeHooks({ hooks: { Stop: {} } }, claudeHooks('http://h:1'))).toThrow('hooks.Stop is not a list');
  });

  it('replaces an earlier Codex command hook too', () => {
    const cmd = '/usr/bin/node /opt/ctxmesh/bin.js hook codex --url http://h:1';
    const merged = mergeHooks(mergeHooks({}, codexHooks(cmd)), codexHooks(cmd));
    expect((merged.hooks as Record<string, unknown[]>).Stop).toHaveLength(1);
  });
});

describe('writeHooksFile', () => {
  it('creates the file and its directory, and leaves a file that is not JSON untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hooks-file-'));
    const path = join(dir, '.claude', 'settings.json');
    expect(await writeHooksFile(path, claudeHooks('http://h:1'))).toBe(6);
    expect(JSON.parse(readFileSync(path, 'utf8')).hooks.Stop).toHaveLength(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "model": ');
    await expect(writeHooksFile(bad, claudeHooks('http://h:1'))).rejects.toThrow('is not valid JSON');
    expect(readFileSync(bad, 'utf8')).toBe('{ "model": ');
  });
});

describe('hooksCommand', () => {
  it('prints {"hooks": …} for codex with a command that runs this CLI, shell-quoted', async () => {
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: () => undefined, cwd: '/tmp', bin: '/opt/my ctxmesh/bin.js', node: '/usr/bin/node' };
    expect(await hooksCommand(['codex'], { url: 'h:9' }, {}, io)).toBe(0);
    const printed = JSON.parse(out.join(''));
    expect(printed.hooks.UserPromptSubmit[0].hooks[0]).toEqual({ type: 'command', command: "/usr/bin/node '/opt/my ctxmesh/bin.js' hook codex --url http://h:9", timeout: 5 });
    await expect(hooksCommand(['cursor'], {}, {}, io)).rejects.toThrow('claude-code|codex');
    await expect(hooksCommand(['claude-code'], { timeout: '0' }, {}, io)).rejects.toThrow('--timeout');
  });
});

describe('forwardHook', () => {
  const fakeFetch = (status: number, body: string) => (async () => new Response(body, { status })) as unknown as typeof fetch;
  it('prints the JSON answer of a 2xx, and {} with the reason otherwise', async () => {
    const ok = await forwardHook('codex', '{}', { url: 'h:1', fetch: fakeFetch(200, '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}') });
    expect(ok).toEqual({ stdout: '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}', problem: null });
    expect((await forwardHook('codex', '{}', { url: 'h:1', fetch: fakeFetch(401, '{"status":"error"}') })).stdout).toBe('{}');
    expect((await forwardHook('codex', '{}', { url: 'h:1', fetch: fakeFetch(200, 'not json') })).problem).toContain('h:1');
    expect((await forwardHook('codex', '{}', { url: 'ftp://x' })).stdout).toBe('{}');
  });
});
