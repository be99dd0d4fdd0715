import Database from 'better-sqlite3';
import type { SessionKey, SessionStore } from '@ctxmesh/stores';
import { EmbeddedSessionStore } from './embedded-session-store';
import { describeSessionStoreContract } from './__tests__/session-store-contract';
import { describeWorkspaceStoreContract } from './__tests__/workspace-store-contract';

const NOW = 1_700_000_000_000;
const dbs = new WeakMap<SessionStore, Database.Database>();

describeSessionStoreContract('embedded', {
  async make() {
    const db = new Database(':memory:');
    const store = new EmbeddedSessionStore(db, { clock: () => NOW });
    dbs.set(store, db);
    return store;
  },
  async cleanup(store) {
    dbs.get(store)?.close();
  },
  async ttlSeconds(store, key, kind, id) {
    const db = dbs.get(store)!;
    const skey = JSON.stringify([key.account, key.user, key.sessionId]);
    const row =
      kind === 'budget'
        ? (db.prepare('SELECT expires_at AS e FROM sessions_budget WHERE skey = ? AND agent_id = ?').get(skey, id) as { e: number })
        : (db.prepare('SELECT expires_at AS e FROM sessions_idem WHERE skey = ? AND request_id = ?').get(skey, id) as { e: number });
    return (row.e - NOW) / 1000;
  },
});

const wsDbs = new WeakMap<object, Database.Database>();
describeWorkspaceStoreContract('embedded', {
  async make() {
    const db = new Database(':memory:');
    const store = new EmbeddedSessionStore(db, { clock: () => NOW });
    wsDbs.set(store, db);
    return store;
  },
  async cleanup(store) {
    wsDbs.get(store)?.close();
  },
});

describe('EmbeddedSessionStore', () => {
  const key: SessionKey = { account: 'a', user: 'u', sessionId: 's' };

  it('treats expired budgets and idempotency records as absent', async () => {
    let now = NOW;
    const store = new EmbeddedSessionStore(new Database(':memory:'), { clock: () => now });
    await store.commit(key, {
      expect: { head: -1, generation: 0 },
      events: ['{"type":"turn/start"}'],
      surfaceOps: [],
      generation: 0,
      create: { estimatorId: 'e', createdAt: now, epoch: 'x' },
      budgetCharge: { agentId: 'ag', max: 1, ttlSeconds: 10 },
      idempotency: { requestId: 'r', value: 'v', ttlSeconds: 5 },
    });
    expect(await store.readBudget(key, 'ag')).toMatchObject({ used: 1 });
    expect(await store.getIdempotent(key, 'r')).toBe('v');
    now += 6_000;
    expect(await store.getIdempotent(key, 'r')).toBeNull();
    expect(await store.putIdempotent(key, { requestId: 'r', value: 'w', ttlSeconds: 5 })).toBeNull();
    expect(await store.readBudget(key, 'ag')).not.toBeNull();
    now += 5_000;
    expect(await store.readBudget(key, 'ag')).toBeNull();
    expect(await store.listBudgets(key)).toEqual([]);
    // An expired budget no longer blocks a charge: counting restarts at 1.
    const res = await store.commit(key, {
      expect: { head: 0, generation: 0 },
      events: ['{"type":"turn/end"}'],
      surfaceOps: [],
      generation: 0,
      budgetCharge: { agentId: 'ag', max: 1, ttlSeconds: 10 },
    });
    expect(res.status).toBe('ok');
    expect(await store.readBudget(key, 'ag')).toMatchObject({ used: 1 });
  });

  it('closes the database only when it owns it', async () => {
    const db = new Database(':memory:');
    await new EmbeddedSessionStore(db).close();
    expect(db.open).toBe(true);
    await new EmbeddedSessionStore(db, { ownsDb: true }).close();
    expect(db.open).toBe(false);
  });
});
