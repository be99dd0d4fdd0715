import Database from 'better-sqlite3';
import { describeLedgerStoreContract } from '../contract/ledger-store.contract';
import { parseLedgerRecord } from '../ports/ledger-store';
import { ledgerEvictions, SqliteLedgerStore } from './sqlite-ledger-store';

describe('SqliteLedgerStore', () => {
  it('purges every expired ledger and keeps live ones', async () => {
    let now = 1_000;
    const db = new Database(':memory:');
    const store = new SqliteLedgerStore(db, { ttlMs: 100, now: () => now, sweepEvery: 0 });
    const a = { account: 'a', user: 'u', sessionId: 'old' };
    const b = { account: 'a', user: 'u', sessionId: 'live' };
    await store.beginTurn(a);
    await store.record(a, 0, 2, [{ uri: 'x', detail: 'full' }], 500);
    now = 1_050;
    await store.beginTurn(b);
    now = 1_120;
    expect(store.purgeExpired()).toBe(1);
    const count = db.prepare('SELECT count(*) AS n FROM ledger_record').get() as { n: number };
    expect(count.n).toBe(0);
    expect((await store.beginTurn(b)).turn).toBe(1);
    db.close();
  });

  it('shares one file between two handles with the same clock sequence', async () => {
    const db = new Database(':memory:');
    const one = new SqliteLedgerStore(db);
    const two = new SqliteLedgerStore(db);
    const key = { account: 'a', user: 'u', sessionId: 's' };
    expect((await one.beginTurn(key)).turn).toBe(0);
    expect((await two.beginTurn(key)).turn).toBe(1);
    db.close();
  });
});

describe('ledgerEvictions', () => {
  it('drops unusable and out-of-window rows, then the lowest turns beyond the cap', () => {
    const rows = [
      { uri: 'bad', raw: '{"turn":"x"}', ord: 0 },
      { uri: 'low', raw: '{"turn":1}', ord: 1 },
      { uri: 'high', raw: '{"turn":9}', ord: 2 },
      { uri: 'a', raw: '{"turn":5}', ord: 3 },
      { uri: 'b', raw: '{"turn":5}', ord: 4 },
      { uri: 'ahead', raw: '{"turn":11}', ord: 5 },
    ];
    expect(ledgerEvictions(rows, 2, 10, 2).sort()).toEqual(['ahead', 'b', 'bad', 'low']);
    expect(rows.filter((r) => parseLedgerRecord(r.raw) === null).map((r) => r.uri)).toEqual(['bad']);
  });
});

describeLedgerStoreContract('sqlite', async () => {
  const now = Date.now();
  const db = new Database(':memory:');
  const store = new SqliteLedgerStore(db, { ttlMs: 60_000, now: () => now });
  return {
    store,
    // Only this ledger's deadline moves, so the other tests' sessions stay live.
    expire: async (key) => {
      db.prepare('UPDATE ledger_session SET expires_at = ? WHERE account = ? AND user = ? AND session = ?').run(now, key.account, key.user, key.sessionId);
    },
    dispose: async () => {
      db.close();
    },
  };
});
