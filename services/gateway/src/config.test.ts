import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@ctxmesh/runtime';
import { DEFAULT_HOOKS, loadGatewayConfig, parseApiKeys } from './config';

function problems(env: Record<string, string>): string[] {
  try {
    loadGatewayConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('loadGatewayConfig', () => {
  it('applies the defaults', () => {
    const c = loadGatewayConfig({});
    expect(c).toMatchObject({
      port: 1933,
      host: '0.0.0.0',
      orchestratorAddr: '127.0.0.1:50061',
      sessionsAddr: '127.0.0.1:50067',
      auth: { mode: 'dev' },
      deadlines: { defaultMs: 60_000, maxMs: 120_000 },
      natsUrl: undefined,
      ingest: { stream: 'CTXMESH_INGEST', doneSubjectPrefix: 'ctxmesh.done.ingest', deadLetterSubject: 'ctxmesh.dlq.ingest' },
    });
  });

  it('builds the api_key table', () => {
    const c = loadGatewayConfig({ CTXMESH_AUTH_MODE: 'api_key', CTXMESH_API_KEYS: 'k1=acme:alice, k2=acme:bob:admin' });
    if (c.auth.mode !== 'api_key') throw new Error('expected api_key mode');
    const keys = c.auth.keys as ReadonlyMap<string, unknown>;
    expect(keys.get('k1')).toEqual({ accountId: 'acme', userId: 'alice', role: 'user' });
    expect(keys.get('k2')).toEqual({ accountId: 'acme', userId: 'bob', role: 'admin' });
  });

  it('lists every problem at once, including cross-field ones', () => {
    const p = problems({
      GATEWAY_PORT: 'eighty',
      ORCHESTRATOR_ADDR: 'nohost',
      CTXMESH_AUTH_MODE: 'api_key',
      CTXMESH_REQUEST_TIMEOUT_MS: '0',
    });
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^GATEWAY_PORT: /),
        expect.stringMatching(/^ORCHESTRATOR_ADDR: /),
        expect.stringMatching(/^CTXMESH_REQUEST_TIMEOUT_MS: /),
        'CTXMESH_API_KEYS: required when CTXMESH_AUTH_MODE=api_key',
      ]),
    );
    expect(p).toHaveLength(4);
  });

  it('rejects a default budget above the maximum', () => {
    expect(problems({ CTXMESH_REQUEST_TIMEOUT_MS: '5000', CTXMESH_MAX_REQUEST_TIMEOUT_MS: '1000' })).toEqual([
      'CTXMESH_REQUEST_TIMEOUT_MS: must be ≤ CTXMESH_MAX_REQUEST_TIMEOUT_MS',
    ]);
  });

  it('rejects an unknown auth mode', () => {
    expect(problems({ CTXMESH_AUTH_MODE: 'oauth' })).toEqual([expect.stringMatching(/^CTXMESH_AUTH_MODE: must be one of dev, api_key, trusted/)]);
  });
});

describe('loadGatewayConfig: the hook routes', () => {
  it('defaults to a 1.5 s budget, dedup 5, 8,000 carry-on characters and no transcript root', () => {
    expect(loadGatewayConfig({}).hooks).toEqual(DEFAULT_HOOKS);
  });

  it('resolves the transcript root to its real path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-root-'));
    expect(loadGatewayConfig({ CTXMESH_HOOK_TRANSCRIPT_ROOT: dir, CTXMESH_HOOK_BUDGET_MS: '800' }).hooks).toEqual({ ...DEFAULT_HOOKS, budgetMs: 800, transcriptRoot: realpathSync(dir) });
  });

  it('fails fast on a relative, missing or non-directory root and an out-of-range budget, all at once', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gw-root-')), 'f');
    writeFileSync(file, 'x');
    expect(problems({ CTXMESH_HOOK_TRANSCRIPT_ROOT: 'rel/dir', CTXMESH_HOOK_BUDGET_MS: '10' })).toEqual([
      expect.stringContaining('CTXMESH_HOOK_BUDGET_MS'),
      'CTXMESH_HOOK_TRANSCRIPT_ROOT: must be an absolute path',
    ]);
    expect(problems({ CTXMESH_HOOK_TRANSCRIPT_ROOT: join(tmpdir(), 'no-such-dir-ctxmesh') })).toEqual(['CTXMESH_HOOK_TRANSCRIPT_ROOT: no such directory']);
    expect(problems({ CTXMESH_HOOK_TRANSCRIPT_ROOT: file })).toEqual(['CTXMESH_HOOK_TRANSCRIPT_ROOT: not a directory']);
  });
});

describe('parseApiKeys', () => {
  it('reads the JSON form', () => {
    const r = parseApiKeys('{"s3cret": {"account_id": "a", "user_id": "u", "role": "root"}}');
    expect(r.problems).toEqual([]);
    expect(r.keys.get('s3cret')).toEqual({ accountId: 'a', userId: 'u', role: 'root' });
  });

  it('reports bad entries without echoing the keys', () => {
    const r = parseApiKeys('topsecret, k2=acme:bad/user, k3=acme:u:god, k2=acme:u');
    expect(r.problems).toEqual([
      'CTXMESH_API_KEYS: entry #1: expected key=account:user[:role]',
      'CTXMESH_API_KEYS: entry #2: user must match ^[A-Za-z0-9_.@-]+$',
      'CTXMESH_API_KEYS: entry #3: role must be one of root, admin, user',
      'CTXMESH_API_KEYS: entry #4: duplicate key',
    ]);
    expect(r.problems.join('\n')).not.toContain('topsecret');
  });

  it('rejects malformed JSON and non-object JSON', () => {
    expect(parseApiKeys('{nope').problems).toEqual([expect.stringMatching(/^CTXMESH_API_KEYS: not valid JSON/)]);
    expect(parseApiKeys('{}').problems).toEqual(['CTXMESH_API_KEYS: no keys']);
  });
});
