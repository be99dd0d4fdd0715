import { Metadata } from '@grpc/grpc-js';
import { common, type ledger } from '@ctxmesh/proto';
import { Budget, Code, type CallContext } from '@ctxmesh/rpc';
import { openEmbeddedDb, SqliteLedgerStore, type EmbeddedDb, type LedgerStore, type LedgerTurn } from '@ctxmesh/stores';
import pino from 'pino';
import { createHandlers } from '../server';

const log = pino({ level: 'silent' });
const identity = (accountId = 'acme', userId = 'alice'): common.Identity => ({
  accountId,
  userId,
  role: common.Role.ROLE_USER,
  actorPeerId: '',
  workspace: '',
  requestId: '',
});

function ctx(ms = 5000): CallContext {
  return { budget: Budget.ofMs(ms), log, metadata: new Metadata(), requestId: 'r1' };
}

const begin = (h: ReturnType<typeof createHandlers>, req: Partial<ledger.BeginTurnRequest>) =>
  h.beginTurn({ identity: identity(), sessionId: 's1', dedupTurns: 2, ...req }, ctx());
const record = (h: ReturnType<typeof createHandlers>, req: Partial<ledger.RecordServedRequest>) =>
  h.recordServed({ identity: identity(), sessionId: 's1', dedupTurns: 2, turn: 0, entries: [], ...req }, ctx());

/** A store whose calls never answer (a hung connection). */
class HangingStore implements LedgerStore {
  beginTurn(): Promise<LedgerTurn> {
    return new Promise(() => undefined);
  }
  record(): Promise<void> {
    return new Promise(() => undefined);
  }
  async putRaw(): Promise<void> {}
  async ping(): Promise<boolean> {
    return false;
  }
  async close(): Promise<void> {}
}

describe('ledger handlers', () => {
  let db: EmbeddedDb;
  let h: ReturnType<typeof createHandlers>;
  beforeEach(() => {
    db = openEmbeddedDb(':memory:');
    h = createHandlers(new SqliteLedgerStore(db));
  });
  afterEach(() => {
    if (db.open) db.close();
  });

  it('starts a session at turn 0 with status new and advances the clock on every request', async () => {
    expect(await begin(h, {})).toEqual({ status: 'new', turn: 0, cooledUris: [], cooledTurns: [] });
    expect(await begin(h, { dedupTurns: 0 })).toEqual({ status: 'off', turn: 1, cooledUris: [], cooledTurns: [] });
    expect(await begin(h, {})).toEqual({ status: 'ok', turn: 2, cooledUris: [], cooledTurns: [] });
  });

  it('cools a served entry for dedup_turns − 1 later requests and never cools a uri-tier entry', async () => {
    const t0 = await begin(h, {});
    expect(await record(h, { turn: t0.turn, entries: [{ uri: 'viking://resources/a.md', detail: 'full' }, { uri: 'viking://resources/b.md', detail: 'uri' }] })).toEqual({
      status: 'ok',
    });
    const cooled = await begin(h, {});
    expect(cooled.cooledUris).toEqual(['viking://resources/a.md']);
    // The turn it was served in rides along, for explain's cooled_turn.
    expect(cooled.cooledTurns).toEqual([0]);
    expect((await begin(h, {})).cooledUris).toEqual([]);
  });

  it('keeps ledgers of different accounts apart for the same session id', async () => {
    await begin(h, {});
    await begin(h, {});
    const other = await h.beginTurn({ identity: identity('globex'), sessionId: 's1', dedupTurns: 2 }, ctx());
    expect(other).toEqual({ status: 'new', turn: 0, cooledUris: [], cooledTurns: [] });
  });

  it('answers ok without writing when there is nothing to record', async () => {
    const t0 = await begin(h, {});
    expect(await record(h, { turn: t0.turn, dedupTurns: 0, entries: [{ uri: 'viking://resources/a.md', detail: 'full' }] })).toEqual({ status: 'ok' });
    expect((await begin(h, {})).cooledUris).toEqual([]);
  });

  it('rejects a request without an account or user as INVALID_ARGUMENT', async () => {
    await expect(h.beginTurn({ identity: undefined, sessionId: 's1', dedupTurns: 1 }, ctx())).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      reason: 'MISSING_IDENTITY',
    });
    await expect(h.recordServed({ identity: identity('acme', ''), sessionId: 's1', dedupTurns: 1, turn: 0, entries: [] }, ctx())).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      reason: 'MISSING_IDENTITY',
    });
  });

  it('maps domain validation to INVALID_ARGUMENT naming the field', async () => {
    await expect(begin(h, { sessionId: ' ' })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_SESSION_ID' });
    await expect(begin(h, { dedupTurns: 101 })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_DEDUP_TURNS' });
    await expect(record(h, { turn: -1 })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_TURN' });
    await expect(record(h, { entries: [{ uri: '', detail: 'full' }] })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_ENTRIES' });
  });

  it('degrades to unavailable and write_failed when the database is closed', async () => {
    db.close();
    expect(await begin(h, {})).toEqual({ status: 'unavailable', turn: 0, cooledUris: [], cooledTurns: [] });
    expect(await begin(h, { dedupTurns: 0 })).toEqual({ status: 'off', turn: 0, cooledUris: [], cooledTurns: [] });
    expect(await record(h, { entries: [{ uri: 'viking://resources/a.md', detail: 'full' }] })).toEqual({ status: 'write_failed' });
  });

  it('gives up on a hanging store after its cap instead of failing the call', async () => {
    const hung = createHandlers(new HangingStore(), 20);
    expect(await begin(hung, {})).toEqual({ status: 'unavailable', turn: 0, cooledUris: [], cooledTurns: [] });
    expect(await record(hung, { entries: [{ uri: 'viking://resources/a.md', detail: 'full' }] })).toEqual({ status: 'write_failed' });
  });
});
