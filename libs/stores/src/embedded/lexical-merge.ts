import type Database from 'better-sqlite3';
import type { EmbeddedDb } from './db';
import type { BlockWriter } from './lexical-blocks';
import type { TailMirror, TailState, TermName } from './lexical-tail';

/** Options of one merge step ({@link TailMerge.step}). */
export interface MergeStepOptions {
  /**
   * Time the step may take, ms: checked after each term it merges (or looks up) and each chunk
   * of rows it deletes, so a step overruns it by at most one term's or chunk's work (and the
   * commit). @default 25
   */
  budgetMs?: number;
  /** Pending rows below which no new merge starts (a merge in progress always goes on). @default 1 */
  minRows?: number;
  /** Most terms merged (or row chunks deleted) in the step: lets tests stop a merge midway. @default Infinity */
  maxWork?: number;
}

/** Pending rows deleted per statement once a merge's terms are done. */
const DELETE_CHUNK = 2048;

/** A merge's work list in this process (rebuilt, and its lookups redone, by any other process or after a restart). */
interface Plan {
  mergeVer: number;
  /** The tail's terms when the plan was made (a superset of R's). */
  terms: TermName[];
  /** Per term: its id in the index, 0 when the index lacks it or R has no posting of it. */
  tids: Float64Array;
  /** Terms looked up so far. */
  resolved: number;
  /** Indexes of the terms the index holds, by ascending id (once all are looked up). */
  order: Int32Array | null;
  /** Next position: in `order` (phase 1), in `terms` (phase 2). */
  at: number;
  /** The phase `at` belongs to (another process may have moved the merge on meanwhile). */
  phase: number;
  /** Terms this process merged (committed): phase 2 skips them without a lookup. */
  done: Set<TermName>;
}

/**
 * The merge of the lexical index's tail into its blocks, in steps that each are one write
 * transaction of bounded time (see {@link TailState} for the protocol). A merge takes every
 * pending row (its set R) and moves R's postings term by term: first the terms the index
 * already holds, looked up then visited in id order — the order of the blocks' and terms'
 * keys, so each page of them is written once per merge however many steps it takes (phase 1);
 * then the terms new to the index (phase 2, created with ids in that order); then it drops R
 * and deletes its rows (phase 3). A term costs one rewrite of its tiers' last blocks however
 * many of R's rows hold it, so a merge of many rows costs far less per row than writing each
 * row's postings as it comes. Every write is guarded by the terms' merge stamps, so a step that
 * another process or an earlier run of this one already did is never applied twice.
 */
export class TailMerge {
  private readonly st: Record<'bump' | 'setState' | 'delChunk', Database.Statement>;
  private plan: Plan | null = null;

  constructor(
    private readonly db: EmbeddedDb,
    private readonly blocks: BlockWriter,
    private readonly tail: TailMirror,
  ) {
    this.st = {
      bump: db.prepare('INSERT INTO vi_lex_version(id, ver) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET ver = ver + 1 RETURNING ver').pluck(),
      setState: db.prepare('UPDATE vi_lex_tail SET merge_ver = ?, phase = ?, dropped = ? WHERE id = 1'),
      delChunk: db.prepare('DELETE FROM vi_lex_pending WHERE id IN (SELECT id FROM vi_lex_pending WHERE ver <= ? LIMIT ?)'),
    };
  }

  /**
   * One step of the merge in progress, or the start of a new one when at least `minRows` rows
   * are pending: one write transaction (call it outside any).
   * @returns whether work remains (a merge in progress, or `minRows` pending rows)
   */
  step(opts: MergeStepOptions = {}): boolean {
    const deadline = performance.now() + (opts.budgetMs ?? 25);
    const minRows = Math.max(1, opts.minRows ?? 1);
    const maxWork = opts.maxWork ?? Infinity;
    // Nothing to do is found without taking the write lock.
    this.tail.sync();
    if (this.tail.state.mergeVer === 0 && this.tail.liveRows < minRows) return false;
    // The plan's position moves on only when the step commits (a rolled-back step merged nothing).
    const pos = { resolved: 0, at: 0, merged: [] as TermName[] };
    let s: TailState | null = null;
    this.db
      .transaction((): void => {
        this.tail.sync();
        s = { ...this.tail.state };
        if (s.mergeVer === 0) {
          if (this.tail.liveRows < minRows) {
            s = null;
            return;
          }
          // R: every pending row (all have a lower version than this write's).
          const ver = this.st.bump.get() as number;
          s = { ...s, mergeVer: ver, phase: 1 };
          this.blocks.ver = ver;
        } else this.blocks.ver = this.st.bump.get() as number;
        if (this.plan?.mergeVer !== s.mergeVer) this.plan = this.newPlan(s.mergeVer);
        pos.resolved = this.plan.resolved;
        // A position in another phase than the merge's is no position in it: start the phase over.
        pos.at = this.plan.phase === s.phase ? this.plan.at : 0;
        this.advance(s, this.plan, pos, deadline, maxWork);
        this.st.setState.run(s.mergeVer, s.phase, s.dropped);
      })
      .immediate();
    const after = s as TailState | null;
    if (!after) return false;
    if (after.mergeVer !== 0 && this.plan?.mergeVer === after.mergeVer) {
      this.plan.resolved = pos.resolved;
      this.plan.at = pos.at;
      this.plan.phase = after.phase;
      for (const t of pos.merged) this.plan.done.add(t);
      return true;
    }
    this.plan = null;
    this.tail.sync();
    return this.tail.liveRows >= minRows;
  }

  private newPlan(mergeVer: number): Plan {
    const terms = this.tail.termsUpTo(mergeVer);
    return { mergeVer, terms, tids: new Float64Array(terms.length), resolved: 0, order: null, at: 0, phase: 1, done: new Set() };
  }

  /** Run the merge on until the deadline or `maxWork` terms (updates `s` and `pos`). */
  private advance(s: TailState, plan: Plan, pos: { resolved: number; at: number; merged: TermName[] }, deadline: number, maxWork: number): void {
    let work = 0;
    const spent = (): boolean => ++work >= maxWork || performance.now() >= deadline;
    const R = s.mergeVer;
    for (;;) {
      if (s.phase === 1) {
        while (pos.resolved < plan.terms.length) {
          const t = plan.terms[pos.resolved]!;
          plan.tids[pos.resolved] = this.tail.holds(t, R) ? (this.blocks.termRow(t.account, t.cls, t.term)?.tid ?? 0) : 0;
          pos.resolved++;
          if ((pos.resolved & 255) === 0 && performance.now() >= deadline) return;
        }
        // Once per plan: the terms the index holds, by id (id × 2²² + index sorts as a number).
        plan.order ??= sortedById(plan.tids);
        const order = plan.order;
        while (pos.at < order.length) {
          const t = plan.terms[order[pos.at]!]!;
          const tid = plan.tids[order[pos.at]!]!;
          pos.at++;
          const g = this.tail.groupOf(t, R);
          if (!g || !this.blocks.addTermIf(g, R, tid)) continue;
          pos.merged.push(t);
          if (spent()) return;
        }
        s.phase = 2;
        pos.at = 0;
      } else if (s.phase === 2) {
        while (pos.at < plan.terms.length) {
          const t = plan.terms[pos.at++]!;
          if (plan.done.has(t)) continue;
          const g = this.tail.groupOf(t, R);
          if (!g) continue;
          const row = this.blocks.termRow(t.account, t.cls, t.term);
          if (row && row.merged === R) continue;
          this.blocks.addTerm(g, R, row?.tid);
          pos.merged.push(t);
          if (spent()) return;
        }
        // Every term of R is in the blocks: R goes at once, its rows are deleted below.
        s.phase = 3;
        s.dropped = R;
      } else {
        const n = this.st.delChunk.run(R, DELETE_CHUNK).changes;
        if (n < DELETE_CHUNK) {
          s.mergeVer = 0;
          s.phase = 0;
          return;
        }
        if (spent()) return;
      }
    }
  }
}

/** Indexes of the positive ids of `tids`, by ascending id. */
function sortedById(tids: Float64Array): Int32Array {
  const keys: number[] = [];
  for (let i = 0; i < tids.length; i++) if (tids[i]! > 0) keys.push(tids[i]! * 4_194_304 + i);
  const sorted = Float64Array.from(keys).sort();
  return Int32Array.from(sorted, (k) => k % 4_194_304);
}
