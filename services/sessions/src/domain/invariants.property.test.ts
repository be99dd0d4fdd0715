/**
 * Property tests of the §3.5 invariants over random sessions: random mixes of real user
 * turns, injected rows (content channels, nudges, skill catalogs), scoped instruction rows,
 * assistant messages, tool calls answered fully, partly or not at all (including a lone call
 * next to the protected tail), mid-session system messages, explicit Compress calls (plain,
 * stale and distilling earlier checkpoints) and RecoverOverflow calls.
 *
 * The guard oracle below is written from the spec's definitions, independently of
 * `ranges.ts`, so the properties do not merely restate the implementation.
 */
import fc from 'fast-check';
import { InvalidFieldError } from './errors';
import type { LogEvent, MessageEvent } from './events';
import { isMessageEvent } from './events';
import { CONTEXT_WINDOW_EXCEEDED } from './recovery';
import type { SessionLog } from './session-log';
import { ENGINE_SUMMARY_LEAD, overflowMarkerSummary, SUMMARY_FRAME_PREFIX } from './text';
import { claimTokensOf } from './tokens';
import { assistant, assistantCalls, call, instructions, KEY, newLog, rawLog, result, system, user } from './__tests__/fixtures';

type Step =
  | { k: 'user'; size: number }
  | { k: 'inj'; kind: string; size: number }
  | { k: 'instr'; scope: string }
  | { k: 'asst'; size: number }
  | { k: 'calls'; n: number; answered: number; size: number }
  | { k: 'system' }
  | { k: 'compress'; a: number; b: number; distill: boolean; stale: boolean }
  | { k: 'recover'; agent: string }
  | { k: 'progress'; agent: string }
  | { k: 'idle'; agent: string };

const size = fc.integer({ min: 0, max: 400 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('user' as const), size }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('inj' as const), kind: fc.constantFrom('runtime-context', 'ctxmesh-nudge', 'skill-catalog', 'approval', 'mystery-plugin'), size }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('instr' as const), scope: fc.constantFrom('A', 'B') }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('asst' as const), size }) },
  {
    weight: 4,
    arbitrary: fc
      .record({ k: fc.constant('calls' as const), n: fc.integer({ min: 1, max: 3 }), answered: fc.integer({ min: 0, max: 3 }), size })
      .map((s) => ({ ...s, answered: Math.min(s.answered, s.n) })),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('system' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant('compress' as const), a: fc.nat(200), b: fc.nat(200), distill: fc.boolean(), stale: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('recover' as const), agent: fc.constantFrom('x', 'y') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('progress' as const), agent: fc.constantFrom('x', 'y') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('idle' as const), agent: fc.constantFrom('x', 'y') }) },
);

const CONTENT_KINDS = ['user', 'runtime-context', 'approval', 'tool-context', 'subagent-relay', 'ctxmesh-nudge', 'ctxmesh-prune'];

interface World {
  events: LogEvent[];
  surface: number[];
}

async function world(log: SessionLog, store: ReturnType<typeof newLog>['store']): Promise<World> {
  const events = (await rawLog(store)).map((j) => JSON.parse(j) as LogEvent);
  const { messages } = await log.projectSurface(KEY);
  const surface: number[] = [];
  for (const m of messages) if (surface[surface.length - 1] !== m.seq) surface.push(m.seq);
  return { events, surface };
}

/** Guarded seqs from the spec's definitions. `table` adds every instruction-class row. */
function oracleGuarded(w: World, policy: 'compress' | 'table', allowCheckpoints: boolean): Set<number> {
  const g = new Set<number>(w.surface.slice(Math.max(0, w.surface.length - 5)));
  const ev = (s: number) => w.events[s] as MessageEvent;
  for (let i = w.surface.length - 1; i >= 0; i--) {
    const e = ev(w.surface[i]!);
    if (e.type === 'user/message' && (!e.source || e.source.kind === 'user')) {
      g.add(w.surface[i]!);
      break;
    }
  }
  const scopes = new Set<string>();
  for (let i = w.surface.length - 1; i >= 0; i--) {
    const e = ev(w.surface[i]!);
    if (e.type !== 'user/message' || e.source?.kind !== 'agent-instructions') continue;
    for (const c of e.source.changes ?? []) {
      if (!scopes.has(c.scope)) {
        scopes.add(c.scope);
        g.add(w.surface[i]!);
      }
    }
  }
  for (const s of w.surface) {
    const e = ev(s);
    if (e.type === 'system/message') g.add(s);
    const isCheckpoint = e.type === 'user/message' && e.source?.kind === 'compact-checkpoint';
    if (isCheckpoint && !allowCheckpoints) g.add(s);
    if (policy === 'table' && e.type === 'user/message' && e.source && !CONTENT_KINDS.includes(e.source.kind)) g.add(s);
  }
  return g;
}

/** Tool pairing on a surface: no result without its call, no call separated from its results. */
function pairingProblems(w: World): string[] {
  const problems: string[] = [];
  let group: { seq: number; pending: Set<string> } | null = null;
  for (const s of w.surface) {
    const e = w.events[s] as MessageEvent;
    if (e.type === 'tool/result') {
      if (!group || !group.pending.has(e.callId)) problems.push(`result ${s} without its call`);
      else group.pending.delete(e.callId);
      continue;
    }
    if (group && group.pending.size > 0) problems.push(`call ${group.seq} separated from its results`);
    const calls = e.type === 'assistant/message' ? e.content.filter((b) => b.type === 'tool-call') : [];
    group = calls.length > 0 ? { seq: s, pending: new Set(calls.map((c) => (c as { callId: string }).callId)) } : null;
  }
  if (group && group.pending.size > 0) {
    // Only an in-flight tail group may wait, and then no answer to it may exist in the log.
    const answered = w.events.slice(group.seq + 1).some((e) => e.type === 'tool/result' && group!.pending.has(e.callId));
    if (answered) problems.push(`call ${group.seq} visible while its result is hidden`);
  }
  return problems;
}

function checkTransactions(w: World): void {
  const byId = new Map<string, Array<{ seq: number; e: LogEvent }>>();
  w.events.forEach((e, seq) => {
    const id = 'compactionId' in e ? e.compactionId : e.type === 'user/message' ? e.source?.compactionId : undefined;
    if (!id) return;
    byId.set(id, [...(byId.get(id) ?? []), { seq, e }]);
  });
  for (const parts of byId.values()) {
    expect(parts.map((p) => p.e.type)).toEqual(['compaction/start', 'compaction/summary', 'user/message', 'compaction/end']);
    expect(parts.map((p) => p.seq - parts[0]!.seq)).toEqual([0, 1, 2, 3]);
    const summary = parts[1]!.e as Extract<LogEvent, { type: 'compaction/summary' }>;
    const cp = parts[2]!.e as Extract<LogEvent, { type: 'user/message' }>;
    expect(cp.sourceEventSeqs).toEqual(summary.shadowedSeqs);
    expect(cp.surfaceOp).toEqual({ op: 'replace', startSeq: summary.shadowedRange.start, endSeq: summary.shadowedRange.end });
    expect(summary.shadowedSeqs[0]).toBe(summary.shadowedRange.start);
    expect(summary.shadowedSeqs[summary.shadowedSeqs.length - 1]).toBe(summary.shadowedRange.end);
    // Claim priced with the fixed claim estimator over exactly the hidden slice.
    expect(summary.shadowedTokenCount).toBe(summary.shadowedSeqs.reduce((a, s) => a + claimTokensOf(w.events[s]!), 0));
    expect(cp.content[0]).toEqual({ type: 'text', text: summary.summary });
    if (summary.author === 'engine') {
      expect(summary.summary).toBe(overflowMarkerSummary(summary.shadowedSeqs.length));
      expect(summary.summary).not.toContain(SUMMARY_FRAME_PREFIX);
    } else {
      expect(summary.summary.startsWith(SUMMARY_FRAME_PREFIX)).toBe(true);
      expect(summary.summary.split(SUMMARY_FRAME_PREFIX)).toHaveLength(2);
    }
  }
  // The projected total never goes negative and equals the claim price of the surface.
  let appended = 0;
  let claimed = 0;
  for (const e of w.events) {
    appended += claimTokensOf(e);
    if (e.type === 'compaction/summary' || e.type === 'compaction/prune') claimed += e.shadowedTokenCount;
  }
  expect(appended - claimed).toBe(w.surface.reduce((a, s) => a + claimTokensOf(w.events[s]!), 0));
  expect(appended - claimed).toBeGreaterThanOrEqual(0);
}

async function run(steps: Step[]): Promise<void> {
  const { log, store } = newLog();
  let uid = 0;
  let callN = 0;
  const body = (label: string, n: number) => `${label} uid${++uid}u ${'lorem ipsum '.repeat(Math.ceil(n / 12))}`;
  await log.appendEvents(KEY, { events: [system('system prompt')] });
  let req = 0;
  for (const s of steps) {
    const before = await world(log, store);
    const bytesBefore = await rawLog(store);
    switch (s.k) {
      case 'user':
        await log.appendEvents(KEY, { events: [user(body('user', s.size))] });
        break;
      case 'inj':
        await log.appendEvents(KEY, { events: [user(body(s.kind, s.size), { kind: s.kind })] });
        break;
      case 'instr':
        await log.appendEvents(KEY, { events: [instructions(s.scope, body(`AGENTS ${s.scope}`, 40))] });
        break;
      case 'asst':
        await log.appendEvents(KEY, { events: [assistant(body('assistant', s.size))] });
        break;
      case 'system':
        await log.appendEvents(KEY, { events: [system(body('system', 10))] });
        break;
      case 'calls': {
        const ids = Array.from({ length: s.n }, () => `call${++callN}`);
        await log.appendEvents(KEY, {
          events: [assistantCalls(body('calling', 10), ...ids.map((id) => call(id))), ...ids.slice(0, s.answered).map((id) => result(id, body('result', s.size)))],
        });
        break;
      }
      case 'progress':
        await log.appendEvents(KEY, { agentId: s.agent, events: [assistant(body('progress', 10))] });
        break;
      case 'idle':
        await log.reportAgentStatus(KEY, { agentId: s.agent, status: 'idle' });
        break;
      case 'compress': {
        const n = before.surface.length;
        const i = s.a % n;
        const j = s.b % n;
        let startSeq = before.surface[Math.min(i, j)]!;
        const endSeq = before.surface[Math.max(i, j)]!;
        const checkpoints = before.surface.filter((x) => (before.events[x] as MessageEvent).type === 'user/message' && (before.events[x] as { source?: { kind: string } }).source?.kind === 'compact-checkpoint');
        if (s.distill && checkpoints.length > 0) startSeq = checkpoints[s.a % checkpoints.length]!;
        // A stale edge: any seq of the log, hidden or not.
        if (s.stale) startSeq = s.a % before.events.length;
        // Explicit distillation: a live checkpoint as either edge.
        const distill = checkpoints.includes(startSeq) || checkpoints.includes(endSeq);
        const guards = oracleGuarded(before, 'compress', distill);
        try {
          const res = await log.compress(KEY, { requestId: `c${++req}`, author: req % 2 ? 'model' : 'human', ranges: [{ startSeq, endSeq, summary: `summary ${req}` }] });
          const after = await world(log, store);
          const hidden = before.surface.filter((x) => !after.surface.includes(x));
          for (const h of hidden) expect({ hidden: h, guarded: guards.has(h) }).toEqual({ hidden: h, guarded: false });
          const r = res.results[0]!;
          if (r.status === 'landed') expect(hidden).toEqual(r.shadowedSeqs);
          else expect(hidden).toEqual([]);
        } catch (e) {
          if (!(e instanceof InvalidFieldError)) throw e;
          expect(await rawLog(store)).toEqual(bytesBefore);
        }
        break;
      }
      case 'recover': {
        const offered = (await log.listCompressibleRanges(KEY)).ranges;
        const guards = oracleGuarded(before, 'table', false);
        const res = await log.recoverOverflow(KEY, { requestId: `r${++req}`, agentId: s.agent, failure: { code: CONTEXT_WINDOW_EXCEEDED } });
        const after = await world(log, store);
        const hidden = before.surface.filter((x) => !after.surface.includes(x));
        for (const h of hidden) expect({ hidden: h, guarded: guards.has(h) }).toEqual({ hidden: h, guarded: false });
        if (res.reason === 'compacted') {
          // One reduction, and it is the top-ranked row of the table at that snapshot.
          const best = offered.reduce((a, b) => (b.rankTokens > a.rankTokens ? b : a));
          expect([res.block!.start, res.block!.end]).toEqual([best.start, best.end]);
          expect(hidden.length).toBe(res.block!.hiddenCount);
          expect(hidden).toEqual(before.surface.slice(before.surface.indexOf(best.start), before.surface.indexOf(best.end) + 1));
          const page = await log.decompress(KEY, { ref: res.block!.blockId, limit: 100 });
          expect(page.summary).toBe(overflowMarkerSummary(res.block!.hiddenCount));
          expect(page.summary.startsWith(ENGINE_SUMMARY_LEAD)).toBe(true);
        } else {
          expect(hidden).toEqual([]);
          expect(await rawLog(store)).toEqual(bytesBefore);
          if (res.reason === 'nothing_eligible') expect(offered).toEqual([]);
        }
        break;
      }
    }
    const after = await world(log, store);
    // Append-only: every earlier byte is unchanged.
    expect((await rawLog(store)).slice(0, bytesBefore.length)).toEqual(bytesBefore);
    expect(pairingProblems(after)).toEqual([]);
    // Every offered range is free of guarded rows and balanced.
    const tableGuards = oracleGuarded(after, 'table', false);
    for (const r of (await log.listCompressibleRanges(KEY)).ranges) {
      const slice = after.surface.slice(after.surface.indexOf(r.start), after.surface.indexOf(r.end) + 1);
      expect(slice.length).toBe(r.count);
      expect(slice.filter((x) => tableGuards.has(x))).toEqual([]);
      const cut: World = { events: after.events, surface: after.surface.filter((x) => !slice.includes(x)) };
      expect(pairingProblems(cut)).toEqual([]);
    }
  }
  const final = await world(log, store);
  checkTransactions(final);
  // Projected checkpoint text equals the stored summary, framed by content only.
  const status = await log.getStatus(KEY);
  const { messages } = await log.projectSurface(KEY);
  for (const b of status.blocks) {
    const page = await log.decompress(KEY, { ref: b.kernelRef, limit: 1 });
    const node = messages.find((m) => m.seq === b.summarySeq);
    if (node) expect(node.text).toBe(page.summary);
  }
  // Every hidden original is found by search and reachable through Decompress of its owner.
  const hidden = final.events.map((e, s) => ({ e, s })).filter(({ e, s }) => isMessageEvent(e) && !final.surface.includes(s));
  for (const { e, s } of hidden) {
    const m = /uid\d+u/.exec(JSON.stringify(e));
    if (!m || (e.type === 'user/message' && e.source?.kind === 'compact-checkpoint')) continue;
    const hit = (await log.searchContext(KEY, { query: m[0] })).hits[0];
    expect(hit).toMatchObject({ kind: 'message', seq: s });
    const seqs: number[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await log.decompress(KEY, { ref: hit!.blockId, offset });
      seqs.push(...page.items.map((i) => i.seq));
      offset = page.nextOffset;
    }
    expect(seqs).toContain(s);
  }
}

/** More runs for a soak: SESSIONS_PROPERTY_RUNS=2000. */
const RUNS = Number(process.env.SESSIONS_PROPERTY_RUNS ?? 150);

describe('session invariants (property)', () => {
  it('hold over random sessions, compressions and recoveries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 45 }), async (steps) => {
        await run(steps);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);

  it('hold around a lone tool call next to the protected tail', async () => {
    // The shape of §1.10 edge case 3, with random padding before and after.
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 15 }), fc.integer({ min: 0, max: 3 }), async (prefix, tail) => {
        await run([
          ...prefix,
          { k: 'user', size: 10 },
          { k: 'calls', n: 1, answered: 1, size: 50 },
          ...Array.from({ length: tail }, () => ({ k: 'asst' as const, size: 5 })),
          { k: 'recover', agent: 'x' },
          { k: 'compress', a: 199, b: 200, distill: false, stale: false },
        ]);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, 600_000);
});
