/**
 * Steps 1 and 7: the session's dedup ledger (context-contract §7). Every request naming a
 * session advances its turn clock; with `dedup_turns` it learns which URIs are cooled, and
 * afterwards records what it served. A ledger outage degrades dedup, never the answer.
 */
import type { common, orchestrator } from '@ctxmesh/proto';
import type { ContextRun } from './run';

/** The ledger's part of one request. */
export interface Turn {
  /** This request's turn (null without a session, or when the ledger had none). */
  turn: number | null;
  /** URIs the ledger cooled. */
  cooled: string[];
  /** The turn each cooled URI was served at (for "cooled at turn T"). */
  cooledAt: Map<string, number>;
  /** `stats.dedup`; recording the served entries may still change its status. */
  dedup: orchestrator.DedupStats;
}

/** Step 1: begin the session's turn. */
export async function beginTurn(run: ContextRun): Promise<Turn> {
  const { input, ports, runner, budget } = run;
  const out: Turn = { turn: null, cooled: [], cooledAt: new Map(), dedup: { turns: input.dedupTurns, status: 'off', cooled: 0, turn: undefined } };
  if (!input.sessionId) return out;
  try {
    const t = await runner.mandatory('ledger', (b) => ports.ledger.beginTurn({ identity: input.identity, sessionId: input.sessionId, dedupTurns: input.dedupTurns }, b));
    if (t.status !== 'unavailable') out.turn = t.turn;
    if (input.dedupTurns > 0) {
      out.dedup.status = t.status;
      // Only a loaded ledger has a turn; proto3 sends 0 for "none" (`unavailable`).
      if (t.status === 'new' || t.status === 'ok') {
        out.dedup.turn = t.turn;
        out.cooled = t.cooledUris;
        out.dedup.cooled = t.cooledUris.length;
        t.cooledUris.forEach((u, i) => {
          if (t.cooledTurns[i] !== undefined) out.cooledAt.set(u, Number(t.cooledTurns[i]));
        });
      }
    }
  } catch (err) {
    if (budget.exhausted) throw err;
    // A ledger outage degrades dedup; the request still answers.
    if (input.dedupTurns > 0) out.dedup.status = 'unavailable';
  }
  return out;
}

/**
 * Step 7: record every returned entry at the turn — unless dedup is off or unavailable,
 * nothing was returned, or the digest found nothing relevant.
 */
export async function recordServed(run: ContextRun, turn: Turn, entries: readonly common.Entry[], rewrite: string): Promise<void> {
  const { input, ports, runner, budget } = run;
  const loaded = turn.dedup.status === 'new' || turn.dedup.status === 'ok';
  if (!input.sessionId || input.dedupTurns <= 0 || !loaded || turn.turn === null || entries.length === 0 || rewrite === 'no_relevant') return;
  const at = turn.turn;
  try {
    const r = await runner.mandatory('ledger_record', (b) =>
      ports.ledger.recordServed(
        { identity: input.identity, sessionId: input.sessionId, dedupTurns: input.dedupTurns, turn: at, entries: entries.map((e) => ({ uri: e.uri, detail: e.detail })) },
        b,
      ),
    );
    if (r.status === 'write_failed') turn.dedup.status = 'write_failed';
  } catch (err) {
    if (budget.exhausted) throw err;
    turn.dedup.status = 'write_failed';
  }
}
