/**
 * Redis adapter of the SessionStore port (overflow-recovery §3.2). Every key of a session
 * shares the hash tag `{s:<account>:<user>:<sid>}`, so a session lives in ONE cluster slot and
 * one Lua script can touch all of it. Every mutation is ONE script that first compares
 * `head` and `generation` (and the idempotency record and the budget it charges), then writes
 * the events, the surface cache, the metadata, the ledger cache, the budget and the
 * idempotency record together. A Redis script that fails after its first write keeps that
 * write, so the script does every check (including a dry run of the surface splice) before
 * its first write.
 */
import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import type {
  BudgetRecord,
  CommitResult,
  IdempotencyRecord,
  SessionKey,
  SessionMeta,
  SessionMutation,
  SessionSnapshot,
  SessionStore,
} from '@ctxmesh/stores';
import type { WorkspaceStore } from '../domain/workspaces';

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /** A connected ioredis client (or cluster-compatible client). */
  redis: Redis;
  /**
   * Prefix put before every key, e.g. a per-test namespace. Must not contain `{` or `}`, so the
   * session's hash tag stays the first braces of the key. @default ''
   */
  keyPrefix?: string;
  /** `close()` quits the client. @default false */
  ownsConnection?: boolean;
}

/** The keys of one session. */
export interface SessionKeys {
  meta: string;
  log: string;
  surface: string;
  ledger: string;
  /** Set of agent ids with a budget record (so budgets can be listed without SCAN). */
  budgets: string;
  budget: (agentId: string) => string;
  idem: (requestId: string) => string;
  /** A key in the same slot that is never written; fills unused KEYS slots of a script. */
  unused: string;
}

/** Escape `%`, `:`, `{` and `}` so components can neither collide nor break the hash tag. */
export function encodeKeyPart(s: string): string {
  return s.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** The keys of a session: `<prefix>{s:<account>:<user>:<sid>}:<suffix>`. */
export function sessionKeys(key: SessionKey, prefix = ''): SessionKeys {
  const tag = `${prefix}{s:${encodeKeyPart(key.account)}:${encodeKeyPart(key.user)}:${encodeKeyPart(key.sessionId)}}`;
  return {
    meta: `${tag}:meta`,
    log: `${tag}:log`,
    surface: `${tag}:surface`,
    ledger: `${tag}:ledger`,
    budgets: `${tag}:budgets`,
    budget: (agentId) => `${tag}:budget:${encodeKeyPart(agentId)}`,
    idem: (requestId) => `${tag}:idem:${encodeKeyPart(requestId)}`,
    unused: `${tag}:unused`,
  };
}

// KEYS: 1 meta, 2 log, 3 surface, 4 ledger, 5 budgets set, 6 idem, 7 charged budget, 8.. reset budgets
// ARGV: 1 header JSON, 2 idempotency value, 3.. events
const COMMIT_SCRIPT = `
local h = cjson.decode(ARGV[1])
local exists = redis.call('EXISTS', KEYS[1]) == 1
local head, gen = -1, 0
if exists then
  local m = redis.call('HMGET', KEYS[1], 'head', 'generation')
  head = tonumber(m[1]); gen = tonumber(m[2])
end
if h.idem then
  local prev = redis.call('GET', KEYS[6])
  if prev then return {'duplicate', prev} end
end
if head ~= h.expectHead or gen ~= h.expectGen or ((not exists) and (not h.create)) then
  return {'stale', tostring(head), tostring(gen)}
end
if h.charge then
  local used = tonumber(redis.call('HGET', KEYS[7], 'used') or '0')
  if used >= h.charge.max then return {'budget_spent', tostring(used)} end
end
if redis.call('LLEN', KEYS[2]) ~= head + 1 then
  return redis.error_reply('LOG_LENGTH_MISMATCH log length differs from head')
end
local replaced = nil
for _, op in ipairs(h.ops) do
  if op.op == 'replace' then replaced = true end
end
if replaced then
  -- Dry run of every splice before any write.
  local cur = redis.call('LRANGE', KEYS[3], 0, -1)
  local s = {}
  for i, v in ipairs(cur) do s[i] = tonumber(v) end
  for _, op in ipairs(h.ops) do
    if op.op == 'push' then
      s[#s + 1] = op.seq
    else
      local i, j
      for k = 1, #s do
        if s[k] == op.startSeq then i = k end
        if s[k] == op.endSeq then j = k end
      end
      if (not i) or (not j) or j < i or (j - i + 1) ~= op.count then
        return redis.error_reply('SURFACE_MISMATCH replace ' .. op.startSeq .. '..' .. op.endSeq .. ' does not match the surface cache')
      end
      local out = {}
      for k = 1, i - 1 do out[#out + 1] = s[k] end
      out[#out + 1] = op.seq
      for k = j + 1, #s do out[#out + 1] = s[k] end
      s = out
    end
  end
  replaced = s
end
local function rpush_all(key, items, from)
  local chunk = {}
  for k = from, #items do
    chunk[#chunk + 1] = items[k]
    if #chunk == 500 then redis.call('RPUSH', key, unpack(chunk)); chunk = {} end
  end
  if #chunk > 0 then redis.call('RPUSH', key, unpack(chunk)) end
end
rpush_all(KEYS[2], ARGV, 3)
if replaced then
  redis.call('DEL', KEYS[3])
  rpush_all(KEYS[3], replaced, 1)
else
  local pushes = {}
  for _, op in ipairs(h.ops) do pushes[#pushes + 1] = op.seq end
  rpush_all(KEYS[3], pushes, 1)
end
local newHead = head + (#ARGV - 2)
redis.call('HSET', KEYS[1], 'head', newHead, 'generation', h.newGen)
if not exists then
  redis.call('HSET', KEYS[1], 'estimatorId', h.create.estimatorId, 'createdAt', h.create.createdAt, 'epoch', h.create.epoch)
end
if h.ledger then
  for id, json in pairs(h.ledger) do redis.call('HSET', KEYS[4], id, json) end
end
if h.charge then
  redis.call('HINCRBY', KEYS[7], 'used', 1)
  redis.call('HSET', KEYS[7], 'max', h.charge.max, 'lastGeneration', h.newGen, 'agentId', h.charge.agentId)
  redis.call('EXPIRE', KEYS[7], h.charge.ttl)
  redis.call('SADD', KEYS[5], h.charge.agentId)
  -- Every budget was charged at or before now, so a set refreshed to the same TTL outlives them all.
  redis.call('EXPIRE', KEYS[5], h.charge.ttl)
end
if h.resets then
  for i, aid in ipairs(h.resets) do
    redis.call('DEL', KEYS[7 + i])
    redis.call('SREM', KEYS[5], aid)
  end
end
if h.idem then
  redis.call('SET', KEYS[6], ARGV[2], 'EX', h.idem.ttl)
end
return {'ok', tostring(newHead), tostring(h.newGen)}
`;

// KEYS: 1 idem; ARGV: 1 value, 2 ttl seconds
const PUT_IDEM_SCRIPT = `
local prev = redis.call('GET', KEYS[1])
if prev then return prev end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
return false
`;

// KEYS: 1 budget, 2 budgets set; ARGV: 1 agent id
const RESET_BUDGET_SCRIPT = `
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
`;

// KEYS: 1 workspace owner hash; ARGV: 1 account, 2 createdAt. The first claim wins atomically.
const CLAIM_WORKSPACE_SCRIPT = `
local owner = redis.call('HGET', KEYS[1], 'account')
if owner then return {owner, 0} end
redis.call('HSET', KEYS[1], 'account', ARGV[1], 'createdAt', ARGV[2])
return {ARGV[1], 1}
`;

/** A Lua script run by EVALSHA, falling back to EVAL when the server does not know it yet. */
export class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      // The server's script cache is empty after a restart or SCRIPT FLUSH: send the body once.
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return redis.eval(this.source, keys.length, ...keys, ...args);
      throw err;
    }
  }
}

const commitScript = new LuaScript(COMMIT_SCRIPT);
const putIdemScript = new LuaScript(PUT_IDEM_SCRIPT);
const resetBudgetScript = new LuaScript(RESET_BUDGET_SCRIPT);
const claimWorkspaceScript = new LuaScript(CLAIM_WORKSPACE_SCRIPT);

function toBudget(agentId: string, v: Array<string | null>): BudgetRecord | null {
  if (v[0] === null || v[0] === undefined) return null;
  return { agentId, used: Number(v[0]), max: Number(v[1] ?? 0), lastGeneration: Number(v[2] ?? 0) };
}

/**
 * The workspace keys: `<prefix>ws:owner:<slug>` (HASH `account`, `createdAt`) and
 * `<prefix>ws:active:<account>:<user>` (STRING, the active slug). Each operation touches one
 * key, so they need no hash tag.
 */
export function workspaceKeys(prefix = ''): { owner: (slug: string) => string; active: (account: string, user: string) => string } {
  return {
    owner: (slug) => `${prefix}ws:owner:${encodeKeyPart(slug)}`,
    active: (account, user) => `${prefix}ws:active:${encodeKeyPart(account)}:${encodeKeyPart(user)}`,
  };
}

/** The Redis session store (sessions and workspaces). */
export class RedisSessionStore implements SessionStore, WorkspaceStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly owns: boolean;

  constructor(opts: RedisSessionStoreOptions) {
    const prefix = opts.keyPrefix ?? '';
    if (/[{}]/.test(prefix)) throw new Error('keyPrefix must not contain { or }: the session hash tag must be the first braces');
    this.redis = opts.redis;
    this.prefix = prefix;
    this.owns = opts.ownsConnection ?? false;
  }

  /** The keys of a session (for diagnostics and tests). */
  keysOf(key: SessionKey): SessionKeys {
    return sessionKeys(key, this.prefix);
  }

  async snapshot(key: SessionKey, afterSeq: number): Promise<SessionSnapshot | null> {
    const k = this.keysOf(key);
    const res = await this.redis
      .multi()
      .hmget(k.meta, 'head', 'generation', 'estimatorId', 'createdAt', 'epoch')
      .lrange(k.log, Math.max(0, afterSeq + 1), -1)
      .exec();
    if (!res) throw new Error('snapshot transaction aborted');
    const [[e1, m], [e2, events]] = res as [[Error | null, Array<string | null>], [Error | null, string[]]];
    if (e1) throw e1;
    if (e2) throw e2;
    if (m[0] === null) return null;
    const meta: SessionMeta = {
      head: Number(m[0]),
      generation: Number(m[1]),
      estimatorId: m[2] ?? '',
      createdAt: Number(m[3] ?? 0),
      epoch: m[4] ?? '',
    };
    return { meta, events };
  }

  async commit(key: SessionKey, mutation: SessionMutation): Promise<CommitResult> {
    const k = this.keysOf(key);
    const resets = mutation.budgetResets ?? [];
    const header = {
      expectHead: mutation.expect.head,
      expectGen: mutation.expect.generation,
      newGen: mutation.generation,
      ops: mutation.surfaceOps,
      ...(mutation.create
        ? { create: { estimatorId: mutation.create.estimatorId, createdAt: String(mutation.create.createdAt), epoch: mutation.create.epoch } }
        : {}),
      ...(mutation.ledger && Object.keys(mutation.ledger).length > 0 ? { ledger: mutation.ledger } : {}),
      ...(mutation.budgetCharge
        ? { charge: { agentId: mutation.budgetCharge.agentId, max: mutation.budgetCharge.max, ttl: mutation.budgetCharge.ttlSeconds } }
        : {}),
      ...(resets.length > 0 ? { resets } : {}),
      ...(mutation.idempotency ? { idem: { ttl: mutation.idempotency.ttlSeconds } } : {}),
    };
    // cjson decodes an empty array as an empty object; ipairs over either is a no-op.
    const keys = [
      k.meta,
      k.log,
      k.surface,
      k.ledger,
      k.budgets,
      mutation.idempotency ? k.idem(mutation.idempotency.requestId) : k.unused,
      mutation.budgetCharge ? k.budget(mutation.budgetCharge.agentId) : k.unused,
      ...resets.map((a) => k.budget(a)),
    ];
    const args = [JSON.stringify(header), mutation.idempotency?.value ?? '', ...mutation.events];
    const res = (await commitScript.run(this.redis, keys, args)) as string[];
    switch (res[0]) {
      case 'ok':
        return { status: 'ok', head: Number(res[1]), generation: Number(res[2]) };
      case 'stale':
        return { status: 'stale', head: Number(res[1]), generation: Number(res[2]) };
      case 'budget_spent':
        return { status: 'budget_spent', used: Number(res[1]) };
      case 'duplicate':
        return { status: 'duplicate', value: res[1]! };
      default:
        throw new Error(`unexpected commit reply ${JSON.stringify(res)}`);
    }
  }

  async readSurface(key: SessionKey): Promise<number[]> {
    return (await this.redis.lrange(this.keysOf(key).surface, 0, -1)).map(Number);
  }

  async readLedger(key: SessionKey): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keysOf(key).ledger);
  }

  async readBudget(key: SessionKey, agentId: string): Promise<BudgetRecord | null> {
    const v = await this.redis.hmget(this.keysOf(key).budget(agentId), 'used', 'max', 'lastGeneration');
    return toBudget(agentId, v);
  }

  async listBudgets(key: SessionKey): Promise<BudgetRecord[]> {
    const k = this.keysOf(key);
    const agents = (await this.redis.smembers(k.budgets)).sort();
    if (agents.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const a of agents) pipe.hmget(k.budget(a), 'used', 'max', 'lastGeneration');
    const res = (await pipe.exec()) ?? [];
    const out: BudgetRecord[] = [];
    res.forEach(([err, v], i) => {
      if (err) throw err;
      const b = toBudget(agents[i]!, v as Array<string | null>);
      if (b) out.push(b);
    });
    return out;
  }

  async resetBudget(key: SessionKey, agentId: string): Promise<void> {
    const k = this.keysOf(key);
    await resetBudgetScript.run(this.redis, [k.budget(agentId), k.budgets], [agentId]);
  }

  async getIdempotent(key: SessionKey, requestId: string): Promise<string | null> {
    return this.redis.get(this.keysOf(key).idem(requestId));
  }

  async putIdempotent(key: SessionKey, record: IdempotencyRecord): Promise<string | null> {
    const res = await putIdemScript.run(this.redis, [this.keysOf(key).idem(record.requestId)], [record.value, record.ttlSeconds]);
    return typeof res === 'string' ? res : null;
  }

  async claimWorkspace(slug: string, account: string, createdAt: number): Promise<{ owner: string; created: boolean }> {
    const res = (await claimWorkspaceScript.run(this.redis, [workspaceKeys(this.prefix).owner(slug)], [account, createdAt])) as [string, number];
    return { owner: res[0], created: res[1] === 1 };
  }

  async workspaceOwner(slug: string): Promise<string | null> {
    return this.redis.hget(workspaceKeys(this.prefix).owner(slug), 'account');
  }

  async setActiveWorkspace(account: string, user: string, slug: string): Promise<void> {
    await this.redis.set(workspaceKeys(this.prefix).active(account, user), slug);
  }

  async getActiveWorkspace(account: string, user: string): Promise<string | null> {
    return this.redis.get(workspaceKeys(this.prefix).active(account, user));
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.owns) await this.redis.quit();
  }
}
