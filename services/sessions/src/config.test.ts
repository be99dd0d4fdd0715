import { ConfigError } from '@ctxmesh/runtime';
import { loadSessionsConfig } from './config';

describe('loadSessionsConfig', () => {
  it('defaults: port 50067, embedded store, one overflow retry', () => {
    const c = loadSessionsConfig({});
    expect(c).toMatchObject({ SESSIONS_PORT: 50067, REDIS_URL: undefined, CTXMESH_DATA_DIR: '.ctxmesh', SESSIONS_KEY_PREFIX: '', CTXMESH_MAX_OVERFLOW_RETRIES: 1 });
  });

  it('reads CTXMESH_MAX_OVERFLOW_RETRIES: 0 disables, blank means the default 1', () => {
    expect(loadSessionsConfig({ CTXMESH_MAX_OVERFLOW_RETRIES: '0' }).CTXMESH_MAX_OVERFLOW_RETRIES).toBe(0);
    expect(loadSessionsConfig({ CTXMESH_MAX_OVERFLOW_RETRIES: '3' }).CTXMESH_MAX_OVERFLOW_RETRIES).toBe(3);
    expect(loadSessionsConfig({ CTXMESH_MAX_OVERFLOW_RETRIES: '  ' }).CTXMESH_MAX_OVERFLOW_RETRIES).toBe(1);
  });

  it.each([['-1', 'must be ≥ 0'], ['1.5', 'must be an integer'], ['two', 'must be an integer']])(
    'fails start-up for CTXMESH_MAX_OVERFLOW_RETRIES=%s, naming the variable',
    (raw, message) => {
      let err: unknown;
      try {
        loadSessionsConfig({ CTXMESH_MAX_OVERFLOW_RETRIES: raw });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([`CTXMESH_MAX_OVERFLOW_RETRIES: ${message} (got ${JSON.stringify(raw)})`]);
    },
  );

  it('lists every problem at once', () => {
    expect(() => loadSessionsConfig({ CTXMESH_MAX_OVERFLOW_RETRIES: '-2', REDIS_URL: 'http://x', SESSIONS_KEY_PREFIX: 'a{b}' })).toThrow(
      expect.objectContaining({ problems: expect.arrayContaining([expect.stringMatching(/^CTXMESH_MAX_OVERFLOW_RETRIES/), expect.stringMatching(/^REDIS_URL/), expect.stringMatching(/^SESSIONS_KEY_PREFIX/)]) }),
    );
  });
});
