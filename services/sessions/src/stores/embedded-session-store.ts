/**
 * Embedded (SQLite, `better-sqlite3`) adapter of the SessionStore port: the same semantics
 * as the Redis adapter, with every mutation one IMMEDIATE transaction (checks first; any
 * failure rolls the whole mutation back). It takes an open `Database` (the shared embedded
 * file, or `:memory:` in tests) and owns only its `sessions_*` tables.
 *
 * The surface cache is a table of `(seq, ord)`: a push takes `max(ord) + 1`; a replace
 * deletes the span between the edges' ords and gives the new node the first edge's ord, so
 * positions never need renumbering.
 */
import type Database from 'better-sqlite3';
import type {
  BudgetRecord,
  CommitResult,
  IdempotencyRecord,
  SessionKey,
  SessionMutation,
  SessionSnapshot,
  SessionStore,
} from '@ctxmesh/stores';
import type { WorkspaceStore } from '../domain/workspaces';

/** Options of {@link EmbeddedSessionStore}. */
export interface EmbeddedSessionStoreOptions {
  /** Clock for TTLs, ms since the epoch. @default Date.now */
  clock?: () => number;
  /** `close()` closes the database. @default false (the opener owns the shared file) */
  ownsDb?: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions_meta (
  skey TEXT PRIMARY KEY, head INTEGER NOT NULL, generation INTEGER NOT NULL,
  estimator_id TEXT NOT NULL, created_at INTEGER NOT NULL, epoch TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_log (
  skey TEXT NOT NULL, seq INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (skey, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_surface (
  skey TEXT NOT NULL, seq INTEGER NOT NULL, ord INTEGER NOT NULL, PRIMARY KEY (skey, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_surface_by_ord ON sessions_surface (skey, ord);
CREATE TABLE IF NOT EXISTS sessions_ledger (
  skey TEXT NOT NULL, block_id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (skey, block_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_budget (
  skey TEXT NOT NULL, agent_id TEXT NOT NULL, used INTEGER NOT NULL, max INTEGER NOT NULL,
  last_generation INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (skey, agent_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_idem (
  skey TEXT NOT NULL, request_id TEXT NOT NULL, value TEXT NOT NULL, expires_at INTEGER NOT NULL,
  PRIMARY KEY (skey, request_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_workspace (
  slug TEXT PRIMARY KEY, account TEXT NOT NULL, created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_workspace_active (
  account TEXT NOT NULL, user TEXT NOT NULL, slug TEXT NOT NULL, PRIMARY KEY (account, user)
) WITHOUT ROWID;
`;

/** A surface cache that disagrees with a replace (a bug, never a conflict). */
export class SurfaceMismatchError extends Error {
  override name = 'SurfaceMismatchError';
}

function skeyOf(key: SessionKey): string {
  return JSON.stringify([key.account, key.user, key.sessionId]);
}

interface MetaRow {
  head: number;
  generation: number;
  estimator_id: string;
  created_at: number;
  epoch: string;
}

interface BudgetRow {
  agent_id: string;
  used: number;
  max: number;
  last_generation: number;
}

/** The embedded session store (sessions and workspaces). */
export class EmbeddedSessionStore implements SessionStore, WorkspaceStore {
  private readonly clock: () => number;
  private readonly ownsDb: boolean;
  private readonly st: ReturnType<EmbeddedSessionStore['prepare']>;

  constructor(
    private readonly db: Database.Database,
    opts: EmbeddedSessionStoreOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.ownsDb = opts.ownsDb ?? false;
    db.exec(SCHEMA);
    this.st = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      meta: db.prepare<[string], MetaRow>('SELECT head, generation, estimator_id, created_at, epoch FROM sessions_meta WHERE skey = ?'),
      events: db.prepare<[string, number], { json: string }>('SELECT json FROM sessions_log WHERE skey = ? AND seq > ? ORDER BY seq'),
      maxSeq: db.prepare<[string], { m: number | null }>('SELECT MAX(seq) AS m FROM sessions_log WHERE skey = ?'),
      insertEvent: db.prepare('INSERT INTO sessions_log (skey, seq, json) VALUES (?, ?, ?)'),
      insertMeta: db.prepare(
        'INSERT INTO sessions_meta (skey, head, generation, estimator_id, created_at, epoch) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      updateMeta: db.prepare('UPDATE sessions_meta SET head = ?, generation = ? WHERE skey = ?'),
      surface: db.prepare<[string], { seq: number }>('SELECT seq FROM sessions_surface WHERE skey = ? ORDER BY ord'),
      ordOf: db.prepare<[string, number], { ord: number }>('SELECT ord FROM sessions_surface WHERE skey = ? AND seq = ?'),
      maxOrd: db.prepare<[string], { m: number | null }>('SELECT MAX(ord) AS m FROM sessions_surface WHERE skey = ?'),
      countBetween: db.prepare<[string, number, number], { n: number }>(
        'SELECT COUNT(*) AS n FROM sessions_surface WHERE skey = ? AND ord BETWEEN ? AND ?',
      ),
      deleteBetween: db.prepare('DELETE FROM sessions_surface WHERE skey = ? AND ord BETWEEN ? AND ?'),
      insertSurface: db.prepare('INSERT INTO sessions_surface (skey, seq, ord) VALUES (?, ?, ?)'),
      ledger: db.prepare<[string], { block_id: string; json: string }>('SELECT block_id, json FROM sessions_ledger WHERE skey = ? ORDER BY block_id'),
      putLedger: db.prepare('INSERT INTO sessions_ledger (skey, block_id, json) VALUES (?, ?, ?) ON CONFLICT (skey, block_id) DO UPDATE SET json = excluded.json'),
      budget: db.prepare<[string, string, number], BudgetRow>(
        'SELECT agent_id, used, max, last_generation FROM sessions_budget WHERE skey = ? AND agent_id = ? AND expires_at > ?',
      ),
      budgets: db.prepare<[string, number], BudgetRow>(
        'SELECT agent_id, used, max, last_generation FROM sessions_budget WHERE skey = ? AND expires_at > ? ORDER BY agent_id',
      ),
      putBudget: db.prepare(
        `INSERT INTO sessions_budget (skey, agent_id, used, max, last_generation, expires_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (skey, agent_id) DO UPDATE SET used = excluded.used, max = excluded.max,
           last_generation = excluded.last_generation, expires_at = excluded.expires_at`,
      ),
      deleteBudget: db.prepare('DELETE FROM sessions_budget WHERE skey = ? AND agent_id = ?'),
      idem: db.prepare<[string, string, number], { value: string }>(
        'SELECT value FROM sessions_idem WHERE skey = ? AND request_id = ? AND expires_at > ?',
      ),
      putIdem: db.prepare(
        `INSERT INTO sessions_idem (skey, request_id, value, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (skey, request_id) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      ),
      claimWorkspace: db.prepare('INSERT INTO sessions_workspace (slug, account, created_at) VALUES (?, ?, ?) ON CONFLICT (slug) DO NOTHING'),
      workspaceOwner: db.prepare<[string], { account: string }>('SELECT account FROM sessions_workspace WHERE slug = ?'),
      setActive: db.prepare(
        `INSERT INTO sessions_workspace_active (account, user, slug) VALUES (?, ?, ?)
         ON CONFLICT (account, user) DO UPDATE SET slug = excluded.slug`,
      ),
      getActive: db.prepare<[string, string], { slug: string }>('SELECT slug FROM sessions_workspace_active WHERE account = ? AND user = ?'),
    };
  }

  async snapshot(key: SessionKey, afterSeq: number): Promise<SessionSnapshot | null> {
    const skey = skeyOf(key);
    // One read transaction, so the metadata and the events agree.
    const read = this.db.transaction(() => {
      const m = this.st.meta.get(skey);
      if (!m) return null;
      const events = this.st.events.all(skey, afterSeq).map((r) => r.json);
      return {
        meta: { head: m.head, generation: m.generation, estimatorId: m.estimator_id, createdAt: m.created_at, epoch: m.epoch },
        events,
      };
    });
    return read.deferred();
  }

  async commit(key: SessionKey, mutation: SessionMutation): Promise<CommitResult> {
    const skey = skeyOf(key);
    const now = this.clock();
    const run = this.db.transaction((): CommitResult => {
      const m = this.st.meta.get(skey);
      const head = m ? m.head : -1;
      const generation = m ? m.generation : 0;
      if (mutation.idempotency) {
        const prev = this.st.idem.get(skey, mutation.idempotency.requestId, now);
        if (prev) return { status: 'duplicate', value: prev.value };
      }
      if (head !== mutation.expect.head || generation !== mutation.expect.generation || (!m && !mutation.create)) {
        return { status: 'stale', head, generation };
      }
      if (mutation.budgetCharge) {
        const b = this.st.budget.get(skey, mutation.budgetCharge.agentId, now);
        const used = b?.used ?? 0;
        if (used >= mutation.budgetCharge.max) return { status: 'budget_spent', used };
      }
      const maxSeq = this.st.maxSeq.get(skey)?.m ?? -1;
      if (maxSeq !== head) throw new SurfaceMismatchError(`log ends at ${maxSeq}, head is ${head}`);
      mutation.events.forEach((json, i) => this.st.insertEvent.run(skey, head + 1 + i, json));
      for (const op of mutation.surfaceOps) {
        if (op.op === 'push') {
          const ord = (this.st.maxOrd.get(skey)?.m ?? 0) + 1;
          this.st.insertSurface.run(skey, op.seq, ord);
          continue;
        }
        const a = this.st.ordOf.get(skey, op.startSeq);
        const b = this.st.ordOf.get(skey, op.endSeq);
        if (!a || !b || b.ord < a.ord || this.st.countBetween.get(skey, a.ord, b.ord)!.n !== op.count) {
          throw new SurfaceMismatchError(`replace ${op.startSeq}..${op.endSeq} does not match the surface cache`);
        }
        this.st.deleteBetween.run(skey, a.ord, b.ord);
        this.st.insertSurface.run(skey, op.seq, a.ord);
      }
      const newHead = head + mutation.events.length;
      if (m) this.st.updateMeta.run(newHead, mutation.generation, skey);
      else {
        const c = mutation.create!;
        this.st.insertMeta.run(skey, newHead, mutation.generation, c.estimatorId, c.createdAt, c.epoch);
      }
      for (const [id, json] of Object.entries(mutation.ledger ?? {})) this.st.putLedger.run(skey, id, json);
      if (mutation.budgetCharge) {
        const c = mutation.budgetCharge;
        const used = (this.st.budget.get(skey, c.agentId, now)?.used ?? 0) + 1;
        this.st.putBudget.run(skey, c.agentId, used, c.max, mutation.generation, now + c.ttlSeconds * 1000);
      }
      for (const a of mutation.budgetResets ?? []) this.st.deleteBudget.run(skey, a);
      if (mutation.idempotency) {
        const r = mutation.idempotency;
        this.st.putIdem.run(skey, r.requestId, r.value, now + r.ttlSeconds * 1000);
      }
      return { status: 'ok', head: newHead, generation: mutation.generation };
    });
    // Every refusal returns before the first write, and any throw rolls back.
    return run.immediate();
  }

  async readSurface(key: SessionKey): Promise<number[]> {
    return this.st.surface.all(skeyOf(key)).map((r) => r.seq);
  }

  async readLedger(key: SessionKey): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const r of this.st.ledger.all(skeyOf(key))) out[r.block_id] = r.json;
    return out;
  }

  async readBudget(key: SessionKey, agentId: string): Promise<BudgetRecord | null> {
    const r = this.st.budget.get(skeyOf(key), agentId, this.clock());
    return r ? { agentId: r.agent_id, used: r.used, max: r.max, lastGeneration: r.last_generation } : null;
  }

  async listBudgets(key: SessionKey): Promise<BudgetRecord[]> {
    return this.st.budgets.all(skeyOf(key), this.clock()).map((r) => ({ agentId: r.agent_id, used: r.used, max: r.max, lastGeneration: r.last_generation }));
  }

  async resetBudget(key: SessionKey, agentId: string): Promise<void> {
    this.st.deleteBudget.run(skeyOf(key), agentId);
  }

  async getIdempotent(key: SessionKey, requestId: string): Promise<string | null> {
    return this.st.idem.get(skeyOf(key), requestId, this.clock())?.value ?? null;
  }

  async putIdempotent(key: SessionKey, record: IdempotencyRecord): Promise<string | null> {
    const skey = skeyOf(key);
    const now = this.clock();
    const run = this.db.transaction((): string | null => {
      const prev = this.st.idem.get(skey, record.requestId, now);
      if (prev) return prev.value;
      this.st.putIdem.run(skey, record.requestId, record.value, now + record.ttlSeconds * 1000);
      return null;
    });
    return run.immediate();
  }

  async claimWorkspace(slug: string, account: string, createdAt: number): Promise<{ owner: string; created: boolean }> {
    // One statement: the primary key makes the first claim win; a loser reads the winner.
    const created = this.st.claimWorkspace.run(slug, account, createdAt).changes === 1;
    return { owner: created ? account : this.st.workspaceOwner.get(slug)!.account, created };
  }

  async workspaceOwner(slug: string): Promise<string | null> {
    return this.st.workspaceOwner.get(slug)?.account ?? null;
  }

  async setActiveWorkspace(account: string, user: string, slug: string): Promise<void> {
    this.st.setActive.run(account, user, slug);
  }

  async getActiveWorkspace(account: string, user: string): Promise<string | null> {
    return this.st.getActive.get(account, user)?.slug ?? null;
  }

  async ping(): Promise<boolean> {
    try {
      return this.db.prepare('SELECT 1 AS ok').get() !== undefined;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.ownsDb) this.db.close();
  }
}
