/**
 * Step 6: the digest (context-contract §8.2). Optional and failing closed: the rendered block
 * is kept. `auto` is decided by the rewrite service, which owns the model configuration: it
 * answers `off` without a model. `no_relevant` blanks the block.
 */
import type { common, orchestrator } from '@ctxmesh/proto';
import { skipReasonOf } from '../stages';
import { CONTEXT_STAGES, factsOf, type ContextRun } from './run';

/** What step 6 produced. */
export interface Digest {
  /** The block to answer (blanked by `no_relevant`). */
  rendered: string;
  /** The digest ("" unless the rewrite succeeded). */
  digest: string;
  /** `stats.rewrite`: off, ok, no_relevant, failed or timeout. */
  rewrite: string;
  /** Token usage of the model call, when there was one. */
  usage: orchestrator.TokenUsage | undefined;
  /** Who wrote the digest: `model`, `extractive` or "". */
  engine: string;
}

/** Step 6: ask for a digest of the served entries when the stage table lets the rewrite run. */
export async function writeDigest(run: ContextRun, rendered: string, entries: readonly common.Entry[]): Promise<Digest> {
  const { input, ports, runner } = run;
  const out: Digest = { rendered, digest: '', rewrite: 'off', usage: undefined, engine: '' };
  const facts = factsOf(run, { entries: entries.length });
  const r = await runner.stage(CONTEXT_STAGES.rewrite, facts, (b, timeoutMs) =>
    ports.rewrite.rewriteDigest(
      {
        query: input.query,
        rendered,
        servedUris: entries.map((e) => e.uri),
        maxBullets: Math.max(1, input.rewriteMaxBullets),
        timeoutMs,
        sources: entries.map((e) => ({ uri: e.uri, text: e.text })),
        onlyIfModel: input.rewrite === 'auto',
      },
      b,
    ),
  );
  const last = runner.records.at(-1);
  if (r) {
    out.rewrite = r.status;
    out.engine = r.engine;
    if (r.usage) out.usage = { promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens };
    if (r.status === 'ok') out.digest = r.digest;
    if (r.status === 'no_relevant') out.rendered = '';
    // "auto" without a model: nothing ran, so telemetry says so (and it is not a degradation).
    if (r.status === 'off' && last) Object.assign(last, { outcome: 'skipped', reason: 'NOT_CONFIGURED' });
  } else if (skipReasonOf(CONTEXT_STAGES.rewrite, facts) === null) {
    // Entered (or skipped for time) and produced nothing: the digest the request asked for failed.
    out.rewrite = last?.outcome === 'timeout' ? 'timeout' : 'failed';
  }
  return out;
}
