/** startSessions: readiness follows the store's ping, and a bad retry budget fails start-up before anything listens. */
import { sessions } from '@ctxmesh/proto';
import { checkHealth, connect } from '@ctxmesh/rpc';
import pino from 'pino';
import { ConfigError, startSessions, type SessionsStore } from '../src';
import { user } from '../src/domain/__tests__/fixtures';
import { embeddedFixture, sessionsApi, wire } from './sessions-harness';

const log = pino({ level: 'silent' });

describe('startSessions', () => {
  it('SessionsService health - store ping fails then recovers - NOT_SERVING then SERVING; liveness stays SERVING', async () => {
    const fx = embeddedFixture();
    let up = false;
    const store = Object.assign(Object.create(fx.store) as SessionsStore, { ping: async () => up });
    const server = await startSessions({ port: 0, host: '127.0.0.1', log, store, readyPollMs: 20 });
    try {
      expect(await checkHealth(server.address, '')).toBe(false);
      expect(await checkHealth(server.address, 'ctxmesh.sessions.v1.SessionsService')).toBe(false);
      expect(await checkHealth(server.address, 'liveness')).toBe(true);
      up = true;
      expect(await server.refreshReadiness()).toBe(true);
      expect(await checkHealth(server.address, '')).toBe(true);
    } finally {
      await server.shutdown();
      await fx.dispose();
    }
  });

  it.each([[-1], [1.5], [Number.NaN]])('SessionsService start-up - maxOverflowRetries %p - fails before listening', async (bad) => {
    const fx = embeddedFixture();
    try {
      await expect(startSessions({ port: 0, log, store: fx.store, maxOverflowRetries: bad })).rejects.toThrow(
        expect.objectContaining({ name: 'ConfigError', message: expect.stringMatching(/maxOverflowRetries must be a non-negative integer/) }),
      );
      await expect(startSessions({ port: 0, log, store: fx.store, maxOverflowRetries: bad })).rejects.toBeInstanceOf(ConfigError);
    } finally {
      await fx.dispose();
    }
  });

  it('SessionsService start-up - maxOverflowRetries unset - serves with a budget of 1', async () => {
    const fx = embeddedFixture();
    const server = await startSessions({ port: 0, host: '127.0.0.1', log, store: fx.store });
    const client = connect(sessions.SessionsServiceClient, server.address);
    try {
      const api = sessionsApi(client);
      await api.appendEvents({ sessionId: 's1', events: [wire(user('hi'))] });
      const res = await api.recoverOverflow({ sessionId: 's1', requestId: 'r', agentId: 'a', failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } });
      expect(res.budget).toEqual({ used: 0, max: 1 });
    } finally {
      client.close();
      await server.shutdown();
      await fx.dispose();
    }
  });
});
