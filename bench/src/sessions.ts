/**
 * The `sessions` section: session rescue at scale. One 100,000-event session in the embedded
 * store (a SQLite file), then RecoverOverflow through the sessions domain:
 *
 * - cold: a replica that has never read the session (a fresh `SessionLog` on the same file):
 *   it reads and parses every event, projects the surface, computes the ranges and commits;
 * - warm: the same replica with its view up to date (a ListCompressibleRanges first), another
 *   agent's overflow;
 * - the cold path's phases, timed apart: the store read, JSON parsing, the projection with the
 *   range computation (node facts not memoised, as a fresh process has them), the plan.
 *
 * Medians of `reps` runs; every recovery must answer `retry/compacted` (each hides one more range).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { computeCompressibleRanges, CONTEXT_WINDOW_EXCEEDED, EmbeddedSessionStore, planOverflowCompaction, SessionLog, syntheticSession, type LogEvent } from '@ctxmesh/sessions';
import { summarize, type Summary } from './stats';

/** What the section reports. */
export interface SessionRescueResult {
  events: number;
  reps: number;
  /** Appending the session, 1,000 events per call, ms. */
  appendMs: number;
  recoverColdMs: Summary;
  recoverWarmMs: Summary;
  /** The cold path's phases (medians of the same reps), ms. */
  coldPhasesMs: { storeRead: number; parse: number; projectAndRanges: number; plan: number };
}


const since = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Run the section in `dir` (a scratch directory). */
export async function measureSessionRescue(dir: string, opts: { events: number; reps: number; log: (line: string) => void }): Promise<SessionRescueResult> {
  const db = new Database(join(dir, 'sessions.db'));
  try {
    const store = new EmbeddedSessionStore(db);
    const key = { account: 'bench', user: 'u', sessionId: 'rescue-1' };
    const events = syntheticSession(opts.events);
    let t0 = process.hrtime.bigint();
    const writer = new SessionLog({ store });
    for (let i = 0; i < events.length; i += 1000) await writer.appendEvents(key, { events: events.slice(i, i + 1000) });
    const appendMs = since(t0);
    opts.log(`sessions: ${opts.events} events appended in ${appendMs.toFixed(0)} ms`);

    const cold: number[] = [];
    const warm: number[] = [];
    const phases = { storeRead: [] as number[], parse: [] as number[], projectAndRanges: [] as number[], plan: [] as number[] };
    for (let r = 0; r < opts.reps; r++) {
      // The phases, apart, on the session as it is now.
      t0 = process.hrtime.bigint();
      const snap = (await store.snapshot(key, -1))!;
      phases.storeRead.push(since(t0));
      t0 = process.hrtime.bigint();
      const parsed = snap.events.map((j) => JSON.parse(j) as LogEvent);
      phases.parse.push(since(t0));
      t0 = process.hrtime.bigint();
      const view = new SessionLog({ store }).viewOf(parsed);
      computeCompressibleRanges(view, 5);
      phases.projectAndRanges.push(since(t0));
      t0 = process.hrtime.bigint();
      planOverflowCompaction(view, { compactionId: 'probe', provider: '', model: '', now: 0 });
      phases.plan.push(since(t0));

      const replica = new SessionLog({ store });
      t0 = process.hrtime.bigint();
      const c = await replica.recoverOverflow(key, { requestId: `cold-${r}`, agentId: `cold-${r}`, failure: { code: CONTEXT_WINDOW_EXCEEDED } });
      cold.push(since(t0));
      if (c.reason !== 'compacted') throw new Error(`cold recovery answered ${c.action}/${c.reason}`);
      await replica.listCompressibleRanges(key);
      t0 = process.hrtime.bigint();
      const w = await replica.recoverOverflow(key, { requestId: `warm-${r}`, agentId: `warm-${r}`, failure: { code: CONTEXT_WINDOW_EXCEEDED } });
      warm.push(since(t0));
      if (w.reason !== 'compacted') throw new Error(`warm recovery answered ${w.action}/${w.reason}`);
      opts.log(`sessions: rep ${r + 1}/${opts.reps}: recovery cold ${cold[r]!.toFixed(1)} ms, warm ${warm[r]!.toFixed(1)} ms`);
    }
    return {
      events: opts.events,
      reps: opts.reps,
      appendMs,
      recoverColdMs: summarize(cold),
      recoverWarmMs: summarize(warm),
      coldPhasesMs: { storeRead: mid(phases.storeRead), parse: mid(phases.parse), projectAndRanges: mid(phases.projectAndRanges), plan: mid(phases.plan) },
    };
  } finally {
    db.close();
  }
}
