/**
 * The dedup ledger's rules (context-contract §7, with ctxmesh's turn clock): which URIs are
 * cooled for a request, what a request records, and how a store outage degrades. Pure logic over
 * the LedgerStore port; no gRPC or Redis types.
 *
 * Turn clock: the clock of a request is the number of earlier context requests of its session.
 * Every context request naming the session advances it (BeginTurn), whatever its `dedup_turns`,
 * so an entry served at turn T is held back from the next `dedup_turns − 1` requests.
 */
import {
  LEDGER_MAX_ENTRIES,
  parseLedgerRecord,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type RawLedgerRecord,
} from '@ctxmesh/stores';

/** Largest `dedup_turns` a request may carry (context-contract §1.3). */
export const MAX_DEDUP_TURNS = 100;

/**
 * Ledger status of a request as BeginTurn sees it:
 * - `off`: `dedup_turns == 0` (the clock still advanced);
 * - `new`: the session had no ledger (nothing is cooled);
 * - `ok`: the ledger was read;
 * - `unavailable`: the store did not answer (outage or deadline). ctxmesh's addition: not `off`,
 *   which would claim the caller asked for no dedup, and not `write_failed`, which means the read
 *   worked. The request still answers 200, just without cooling.
 */
export type BeginStatus = 'off' | 'new' | 'ok' | 'unavailable';

/** `stats.dedup.status`: a BeginStatus, or `write_failed` when recording the served entries failed. */
export type DedupStatus = BeginStatus | 'write_failed';

/** Input of {@link beginTurn}. */
export interface BeginTurnInput {
  /** Whose ledger: account, user and session. */
  key: LedgerKey;
  /** `dedup_turns` of the request, an integer in 0..100 (0 = dedup off, clock still advances). */
  dedupTurns: number;
}

/** Outcome of {@link beginTurn}. */
export interface BeginTurnOutcome {
  /** See {@link BeginStatus}. */
  status: BeginStatus;
  /** The clock of this request, or null when the store did not answer. */
  turn: number | null;
  /** URIs in cooldown for this request, sorted; empty unless status is `ok`. */
  cooledUris: string[];
  /** The turn each of `cooledUris` was served at, aligned with it. */
  cooledTurns: number[];
}

/** Input of {@link recordServed}. */
export interface RecordServedInput {
  /** Whose ledger. */
  key: LedgerKey;
  /** The clock returned by {@link beginTurn} for this request. */
  turn: number;
  /** `dedup_turns` of the request (0 = nothing is recorded). */
  dedupTurns: number;
  /** Every returned entry, in response order, with the tier it was served at (`uri` included). */
  entries: LedgerEntry[];
  /** `stats.rewrite` of the request; `no_relevant` means nothing is recorded. */
  rewrite?: string | null;
}

/** Outcome of {@link recordServed}. */
export interface RecordServedOutcome {
  /** `ok` (written), `skipped` (nothing to write, §7) or `write_failed` (the store failed). */
  status: 'ok' | 'skipped' | 'write_failed';
  /** Distinct URIs written (0 unless `ok`). */
  recorded: number;
}

/** `stats.dedup` of a context response (context-contract §6.3). */
export interface DedupStats {
  /** `dedup_turns` of the request. */
  turns: number;
  /** See {@link DedupStatus}. */
  status: DedupStatus;
  /** Number of URIs in cooldown. */
  cooled: number;
  /** The request's clock, or null when the ledger was off or unavailable. */
  turn: number | null;
}

/** Where degradations are reported (a pino logger fits). */
export interface LedgerLog {
  /** Log a degraded call; never throws. */
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** Per-call options. */
export interface LedgerCallOptions {
  /** Aborts waiting for the store (the request's budget); the call then degrades. */
  signal?: AbortSignal;
  /** Degradation log. @default none */
  log?: LedgerLog;
}

/** A caller passed a value no request can carry (the gRPC layer answers INVALID_ARGUMENT). */
export class LedgerRequestError extends Error {
  /** @param field the offending request field */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'LedgerRequestError';
  }
}

/** The store did not answer before the caller's signal fired. */
export class LedgerStoreAbortedError extends Error {
  constructor(cause: unknown) {
    super('ledger store call aborted', { cause });
    this.name = 'LedgerStoreAbortedError';
  }
}

function checkKey(key: LedgerKey): void {
  if (key.sessionId.trim() === '') throw new LedgerRequestError('session_id', 'session_id must be non-empty');
}

function checkDedupTurns(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > MAX_DEDUP_TURNS) {
    throw new LedgerRequestError('dedup_turns', `dedup_turns must be an integer in 0..${MAX_DEDUP_TURNS}`);
  }
}

/** Race a store call against the caller's signal; a late store rejection is swallowed. */
async function guarded<T>(call: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal?.aborted) throw new LedgerStoreAbortedError(signal.reason);
  const p = call();
  if (signal === undefined) return p;
  p.catch(() => undefined);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new LedgerStoreAbortedError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/**
 * The cooled set (context-contract §7): URIs whose record is usable, not ahead of the clock
 * (those are expired survivors), not served as a bare `uri` (budget pressure, not reading), and
 * served less than `dedupTurns` requests ago (`clock − turn < dedupTurns`).
 * @param records stored records by URI, raw; malformed ones are ignored
 * @param clock the request's clock
 * @param dedupTurns the request's `dedup_turns` (≤ 0 cools nothing)
 * @returns cooled URIs, sorted
 */
export function cooledUris(records: Record<string, RawLedgerRecord>, clock: number, dedupTurns: number): string[] {
  return cooledEntries(records, clock, dedupTurns).map((e) => e.uri);
}

/** {@link cooledUris} with the turn each was served at, sorted by URI. */
export function cooledEntries(records: Record<string, RawLedgerRecord>, clock: number, dedupTurns: number): Array<{ uri: string; turn: number }> {
  const out: Array<{ uri: string; turn: number }> = [];
  for (const uri of Object.keys(records)) {
    const rec = parseLedgerRecord(records[uri]!);
    if (rec === null || rec.turn > clock || rec.detail === 'uri') continue;
    if (clock - rec.turn < dedupTurns) out.push({ uri, turn: rec.turn });
  }
  return out.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

/**
 * Start a context request's turn: advance the session's clock (always, even with
 * `dedupTurns == 0`) and, when dedup is on, return the cooled URIs. Never throws for a store
 * failure: the status becomes `unavailable` (or stays `off`) and the request goes on.
 * @throws LedgerRequestError for an empty session id or `dedupTurns` outside 0..100
 */
export async function beginTurn(store: LedgerStore, input: BeginTurnInput, opts: LedgerCallOptions = {}): Promise<BeginTurnOutcome> {
  checkKey(input.key);
  checkDedupTurns(input.dedupTurns);
  let snapshot;
  try {
    snapshot = await guarded(() => store.beginTurn(input.key), opts.signal);
  } catch (err) {
    opts.log?.warn({ err, sessionId: input.key.sessionId }, 'ledger beginTurn failed; dedup degraded');
    return { status: input.dedupTurns === 0 ? 'off' : 'unavailable', turn: null, cooledUris: [], cooledTurns: [] };
  }
  if (input.dedupTurns === 0) return { status: 'off', turn: snapshot.turn, cooledUris: [], cooledTurns: [] };
  if (snapshot.fresh) return { status: 'new', turn: snapshot.turn, cooledUris: [], cooledTurns: [] };
  const cooled = cooledEntries(snapshot.records, snapshot.turn, input.dedupTurns);
  return { status: 'ok', turn: snapshot.turn, cooledUris: cooled.map((e) => e.uri), cooledTurns: cooled.map((e) => e.turn) };
}

/**
 * Record the entries a request returned, each under its node URI as `{turn, detail}` (uri-tier
 * entries too: recorded, never cooling), with eviction done by the store. Nothing is written
 * when dedup is off, the rewrite said `no_relevant`, or there are no entries. A store failure
 * gives `write_failed`; it never throws for one.
 * @throws LedgerRequestError for an empty session id, a bad `dedupTurns`, a negative or
 *   non-integer turn, or an entry with an empty URI
 */
export async function recordServed(store: LedgerStore, input: RecordServedInput, opts: LedgerCallOptions = {}): Promise<RecordServedOutcome> {
  checkKey(input.key);
  checkDedupTurns(input.dedupTurns);
  if (!Number.isSafeInteger(input.turn) || input.turn < 0) throw new LedgerRequestError('turn', 'turn must be a non-negative integer');
  if (input.entries.some((e) => e.uri === '')) throw new LedgerRequestError('entries', 'every entry needs a uri');
  if (input.dedupTurns === 0 || input.rewrite === 'no_relevant' || input.entries.length === 0) return { status: 'skipped', recorded: 0 };
  try {
    await guarded(() => store.record(input.key, input.turn, input.dedupTurns, input.entries, LEDGER_MAX_ENTRIES), opts.signal);
  } catch (err) {
    opts.log?.warn({ err, sessionId: input.key.sessionId, turn: input.turn }, 'ledger record failed');
    return { status: 'write_failed', recorded: 0 };
  }
  return { status: 'ok', recorded: new Set(input.entries.map((e) => e.uri)).size };
}

/**
 * Build `stats.dedup` (context-contract §6.3) from what a request did.
 * @param dedupTurns the request's `dedup_turns`
 * @param begun the BeginTurn outcome, or null when no session was loaded (then `off`)
 * @param recorded the RecordServed outcome, or null when it did not run
 */
export function dedupStats(dedupTurns: number, begun: BeginTurnOutcome | null, recorded: RecordServedOutcome | null = null): DedupStats {
  if (begun === null || begun.status === 'off') return { turns: dedupTurns, status: 'off', cooled: 0, turn: null };
  if (begun.status === 'unavailable') return { turns: dedupTurns, status: 'unavailable', cooled: 0, turn: null };
  return {
    turns: dedupTurns,
    status: recorded?.status === 'write_failed' ? 'write_failed' : begun.status,
    cooled: begun.cooledUris.length,
    turn: begun.turn,
  };
}
