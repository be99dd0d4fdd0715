/** ledger over real gRPC on port 0, on the embedded SQLite store and on real Redis. */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { common, ledger } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, Code, connect } from '@ctxmesh/rpc';
import { openEmbeddedDb, type EmbeddedDb, type LedgerStore } from '@ctxmesh/stores';
import { redisUrl, startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { createLedgerStore, createServer, dedupStats, type BeginTurnOutcome } from '../src';

const log = pino({ level: 'silent' });

const identity = (accountId = 'acme', userId = 'alice'): common.Identity => ({
  accountId,
  userId,
  role: common.Role.ROLE_USER,
  actorPeerId: '',
  workspace: '',
  requestId: '',
});

/** A running ledger service and a client to it. */
interface Harness {
  srv: TestServer;
  client: ledger.LedgerServiceClient;
  beginTurn(req: Partial<ledger.BeginTurnRequest>): Promise<ledger.BeginTurnResponse>;
  recordServed(req: Partial<ledger.RecordServedRequest>): Promise<ledger.RecordServedResponse>;
  close(): Promise<void>;
}

async function serve(store: LedgerStore): Promise<Harness> {
  const srv = await startTestServer([createServer({ store, log })], { checkReady: () => store.ping() });
  const client = connect(ledger.LedgerServiceClient, srv.address);
  const opts = { domain: 'ledger', pass: [Code.INVALID_ARGUMENT], retry: false };
  return {
    srv,
    client,
    beginTurn: (req) => callUnary(client.beginTurn.bind(client), { identity: identity(), sessionId: '', dedupTurns: 0, ...req }, Budget.ofMs(5000), opts),
    recordServed: (req) =>
      callUnary(client.recordServed.bind(client), { identity: identity(), sessionId: '', dedupTurns: 0, turn: 0, entries: [], ...req }, Budget.ofMs(5000), opts),
    close: async () => {
      client.close();
      await srv.close();
    },
  };
}

/** stats.dedup as the orchestrator builds it from a BeginTurn answer. */
function statsOf(dedupTurns: number, res: ledger.BeginTurnResponse) {
  const begun: BeginTurnOutcome = {
    status: res.status as BeginTurnOutcome['status'],
    turn: res.status === 'unavailable' ? null : res.turn,
    cooledUris: res.cooledUris,
    cooledTurns: res.cooledTurns,
  };
  return dedupStats(dedupTurns, begun);
}

/** The scenarios every store must pass. */
function describeLedgerService(name: string, open: () => Promise<{ store: LedgerStore; breakStore(): Promise<void>; dispose(): Promise<void> }>) {
  describe(`LedgerService on ${name}`, () => {
    let h: Harness;
    let fixture: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      fixture = await open();
      h = await serve(fixture.store);
    });
    afterEach(async () => {
      await h.close();
      await fixture.dispose();
    });

    it('LedgerService.BeginTurn - three turns of one session with dedup_turns 2 - cooling and stats.dedup per turn - OK', async () => {
      const sessionId = `s-${randomUUID()}`;
      const a = 'viking://resources/docs/a.md';
      const b = 'viking://user/alice/memories/events/b.md';
      const c = 'viking://resources/docs/c.md';

      const t0 = await h.beginTurn({ sessionId, dedupTurns: 2 });
      expect(t0).toEqual({ status: 'new', turn: 0, cooledUris: [], cooledTurns: [] });
      expect(statsOf(2, t0)).toEqual({ turns: 2, status: 'new', cooled: 0, turn: 0 });
      expect(await h.recordServed({ sessionId, dedupTurns: 2, turn: t0.turn, entries: [{ uri: a, detail: 'full' }, { uri: b, detail: 'uri' }] })).toEqual({
        status: 'ok',
      });

      const t1 = await h.beginTurn({ sessionId, dedupTurns: 2 });
      // a was served at turn 0 (1 − 0 < 2); b was only a bare URI, which never cools.
      expect(t1).toEqual({ status: 'ok', turn: 1, cooledUris: [a], cooledTurns: [0] });
      expect(statsOf(2, t1)).toEqual({ turns: 2, status: 'ok', cooled: 1, turn: 1 });
      await h.recordServed({ sessionId, dedupTurns: 2, turn: t1.turn, entries: [{ uri: c, detail: 'abstract' }] });

      const t2 = await h.beginTurn({ sessionId, dedupTurns: 2 });
      // a has cooled down (2 − 0 = 2); c was served at turn 1.
      expect(t2).toEqual({ status: 'ok', turn: 2, cooledUris: [c], cooledTurns: [1] });
      expect(statsOf(2, t2)).toEqual({ turns: 2, status: 'ok', cooled: 1, turn: 2 });
    });

    it('LedgerService.BeginTurn - dedup_turns 0 - status off and the clock still advances - OK', async () => {
      const sessionId = `s-${randomUUID()}`;
      const first = await h.beginTurn({ sessionId, dedupTurns: 0 });
      expect(first.status).toBe('off');
      expect(statsOf(0, first)).toEqual({ turns: 0, status: 'off', cooled: 0, turn: null });
      expect(await h.beginTurn({ sessionId, dedupTurns: 3 })).toEqual({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
    });

    it('LedgerService.BeginTurn - same session id in another account - separate ledger - OK', async () => {
      const sessionId = `s-${randomUUID()}`;
      await h.beginTurn({ sessionId, dedupTurns: 1 });
      const t = await h.beginTurn({ sessionId, dedupTurns: 1, identity: identity('globex') });
      expect(t).toEqual({ status: 'new', turn: 0, cooledUris: [], cooledTurns: [] });
    });

    it('LedgerService.BeginTurn - no identity - INVALID_ARGUMENT', async () => {
      await expect(h.beginTurn({ sessionId: 's', dedupTurns: 1, identity: undefined })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'MISSING_IDENTITY',
      });
    });

    it('LedgerService.RecordServed - dedup_turns out of range - INVALID_ARGUMENT', async () => {
      await expect(h.recordServed({ sessionId: 's', dedupTurns: 101, entries: [{ uri: 'viking://resources/a.md', detail: 'full' }] })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        reason: 'BAD_DEDUP_TURNS',
      });
    });

    it('LedgerService.BeginTurn - store outage - status unavailable, write_failed, not ready - OK', async () => {
      const sessionId = `s-${randomUUID()}`;
      expect(await checkHealth(h.srv.address, '')).toBe(true);
      await fixture.breakStore();
      const t = await h.beginTurn({ sessionId, dedupTurns: 3 });
      expect(t).toEqual({ status: 'unavailable', turn: 0, cooledUris: [], cooledTurns: [] });
      expect(statsOf(3, t)).toEqual({ turns: 3, status: 'unavailable', cooled: 0, turn: null });
      expect(await h.recordServed({ sessionId, dedupTurns: 3, turn: 0, entries: [{ uri: 'viking://resources/a.md', detail: 'full' }] })).toEqual({
        status: 'write_failed',
      });
      await h.srv.running.refreshReadiness();
      expect(await checkHealth(h.srv.address, '')).toBe(false);
      expect(await checkHealth(h.srv.address, 'liveness')).toBe(true);
    });
  });
}

describeLedgerService('the embedded SQLite store', async () => {
  const db: EmbeddedDb = openEmbeddedDb(':memory:');
  return {
    store: createLedgerStore({ kind: 'embedded', db }),
    breakStore: async () => {
      db.close();
    },
    dispose: async () => {
      if (db.open) db.close();
    },
  };
});

describeLedgerService('Redis', async () => {
  const prefix = `test:${randomUUID()}:ledger:`;
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  const admin = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  return {
    store: createLedgerStore({ kind: 'redis', redis, keyPrefix: prefix, ttlMs: 60_000 }),
    // A closed client is what an outage looks like to the store: every command fails at once.
    breakStore: async () => {
      await redis.quit();
    },
    dispose: async () => {
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await admin.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await admin.quit();
      if (redis.status !== 'end') await redis.quit();
    },
  };
});
