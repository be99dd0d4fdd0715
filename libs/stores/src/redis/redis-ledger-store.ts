import type Redis from 'ioredis';
import {
  DEFAULT_LEDGER_TTL_MS,
  encodeLedgerRecord,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LedgerTurn,
} from '../ports/ledger-store';
import { luaScript, runLua } from './lua';

/** Options of {@link RedisLedgerStore}. */
export interface RedisLedgerStoreOptions {
  /**
   * Key prefix; a ledger lives at `<prefix><account>:<user>:<session>`.
   * @default "ledger:"
   */
  keyPrefix?: string;
  /**
   * Idle lifetime of a ledger in ms (PEXPIRE refreshed by every beginTurn/record/putRaw).
   * @default 604800000 (7 days)
   */
  ttlMs?: number;
}

// Hash layout: `clock` = next clock to hand out, `ord` = next write position, and one field
// `u:<uri>` per record whose value is `<ord>|<record JSON>`. The write position makes eviction's
// tie-break ("stable": first written wins) independent of Redis's hash iteration order.
// Coercion mirrors coerceLedgerRecord (ports/ledger-store.ts): strict JSON object, `turn`
// absent → 0, finite number truncated, boolean 1/0, ASCII-trimmed decimal string with single
// underscores; everything else unusable.
const COMMON = `
local function body_of(v)
  local o, b = string.match(v, '^(%d+)|(.*)$')
  if o then return tonumber(o), b end
  return 0, v
end
local function turn_of(body)
  if not string.find(body, '^%s*{') then return nil end
  local ok, rec = pcall(cjson.decode, body)
  if not ok or type(rec) ~= 'table' then return nil end
  local t = rec['turn']
  if t == nil then return 0 end
  local ty = type(t)
  if ty == 'number' then
    if t ~= t or t == math.huge or t == -math.huge then return nil end
    if t >= 0 then return math.floor(t) end
    return math.ceil(t)
  elseif ty == 'boolean' then
    if t then return 1 end
    return 0
  elseif ty == 'string' then
    local s = string.match(t, '^%s*(.-)%s*$')
    if not string.find(s, '^[+-]?%d[%d_]*$') or string.find(s, '__', 1, true) or string.find(s, '_$') then return nil end
    return tonumber((string.gsub(s, '_', '')))
  end
  return nil
end
local function num(v)
  local n = tonumber(v or '')
  if n == nil then return 0 end
  return n
end
`;

// KEYS[1] ledger; ARGV ttlMs. Returns {clock, fresh, {uri, raw, ...}}.
const BEGIN = luaScript(`${COMMON}
local key = KEYS[1]
local all = redis.call('HGETALL', key)
local clock = 0
local recs = {}
for i = 1, #all, 2 do
  local f = all[i]
  if f == 'clock' then
    clock = num(all[i + 1])
  elseif string.sub(f, 1, 2) == 'u:' then
    local _, b = body_of(all[i + 1])
    recs[#recs + 1] = string.sub(f, 3)
    recs[#recs + 1] = b
  end
end
redis.call('HSET', key, 'clock', string.format('%d', clock + 1))
redis.call('PEXPIRE', key, ARGV[1])
local fresh = 0
if #all == 0 then fresh = 1 end
return {clock, fresh, recs}
`);

// KEYS[1] ledger; ARGV ttlMs, turn, lo, maxEntries, then uri, recordJson pairs.
const RECORD = luaScript(`${COMMON}
local key = KEYS[1]
local turn = tonumber(ARGV[2])
local lo = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local clock = num(redis.call('HGET', key, 'clock'))
local next_ord = num(redis.call('HGET', key, 'ord'))
for i = 5, #ARGV, 2 do
  local f = 'u:' .. ARGV[i]
  local cur = redis.call('HGET', key, f)
  local o = nil
  if cur then o = string.match(cur, '^(%d+)|') end
  if not o then
    o = string.format('%d', next_ord)
    next_ord = next_ord + 1
  end
  redis.call('HSET', key, f, o .. '|' .. ARGV[i + 1])
end
local head = clock - 1
if turn > head then head = turn end
if clock < turn + 1 then clock = turn + 1 end
redis.call('HSET', key, 'clock', string.format('%d', clock), 'ord', string.format('%d', next_ord))
local prev = cjson.decode_invalid_numbers()
cjson.decode_invalid_numbers(false)
local all = redis.call('HGETALL', key)
local keep = {}
for i = 1, #all, 2 do
  local f = all[i]
  if string.sub(f, 1, 2) == 'u:' then
    local o, b = body_of(all[i + 1])
    local t = turn_of(b)
    if t == nil or t < lo or t > head then
      redis.call('HDEL', key, f)
    else
      keep[#keep + 1] = {f, t, o}
    end
  end
end
cjson.decode_invalid_numbers(prev)
if #keep > max then
  table.sort(keep, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    if a[3] ~= b[3] then return a[3] < b[3] end
    return a[1] < b[1]
  end)
  for i = max + 1, #keep do redis.call('HDEL', key, keep[i][1]) end
end
redis.call('PEXPIRE', key, ARGV[1])
return #keep
`);

// KEYS[1] ledger; ARGV ttlMs, uri, raw.
const PUT_RAW = luaScript(`${COMMON}
local key = KEYS[1]
local f = 'u:' .. ARGV[2]
local cur = redis.call('HGET', key, f)
local o = nil
if cur then o = string.match(cur, '^(%d+)|') end
if not o then
  local n = num(redis.call('HGET', key, 'ord'))
  o = string.format('%d', n)
  redis.call('HSET', key, 'ord', string.format('%d', n + 1))
end
redis.call('HSET', key, f, o .. '|' .. ARGV[3])
redis.call('HSETNX', key, 'clock', '0')
redis.call('PEXPIRE', key, ARGV[1])
return 1
`);

/** Escape `%` and `:` so distinct (account, user, session) triples never share a key. */
function part(s: string): string {
  return s.replace(/%/g, '%25').replace(/:/g, '%3A');
}

/**
 * LedgerStore on Redis: one hash per session with a sliding TTL; beginTurn, record and putRaw
 * are each one Lua script, so concurrent requests of a session get distinct clocks and never
 * lose each other's records. Works on Redis Cluster (one key per script).
 */
export class RedisLedgerStore implements LedgerStore {
  private readonly prefix: string;
  private readonly ttlMs: number;

  /**
   * @param redis a connected client; the caller owns it ({@link close} does not quit it). Give
   *   it a bounded `maxRetriesPerRequest` so an outage fails calls instead of queueing them.
   */
  constructor(
    private readonly redis: Redis,
    opts: RedisLedgerStoreOptions = {},
  ) {
    this.prefix = opts.keyPrefix ?? 'ledger:';
    this.ttlMs = Math.max(1, Math.floor(opts.ttlMs ?? DEFAULT_LEDGER_TTL_MS));
  }

  /** The Redis key of a ledger. */
  keyOf(key: LedgerKey): string {
    return `${this.prefix}${part(key.account)}:${part(key.user)}:${part(key.sessionId)}`;
  }

  /** {@inheritDoc LedgerStore.beginTurn} */
  async beginTurn(key: LedgerKey): Promise<LedgerTurn> {
    const [clock, fresh, flat] = (await runLua(this.redis, BEGIN, [this.keyOf(key)], [this.ttlMs])) as [number, number, string[]];
    const records: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 0; i + 1 < flat.length; i += 2) records[flat[i]!] = flat[i + 1]!;
    return { turn: Number(clock), fresh: Number(fresh) === 1, records };
  }

  /** {@inheritDoc LedgerStore.record} */
  async record(key: LedgerKey, turn: number, dedupTurns: number, entries: LedgerEntry[], maxEntries: number): Promise<void> {
    const args: Array<string | number> = [this.ttlMs, turn, turn - 4 * dedupTurns, maxEntries];
    for (const e of entries) args.push(e.uri, encodeLedgerRecord(turn, e.detail));
    await runLua(this.redis, RECORD, [this.keyOf(key)], args);
  }

  /** {@inheritDoc LedgerStore.putRaw} */
  async putRaw(key: LedgerKey, uri: string, raw: string): Promise<void> {
    await runLua(this.redis, PUT_RAW, [this.keyOf(key)], [this.ttlMs, uri, raw]);
  }

  /** {@inheritDoc LedgerStore.ping} */
  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  /** Nothing to release: the client belongs to the caller. */
  async close(): Promise<void> {}
}
