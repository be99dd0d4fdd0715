/**
 * Step 3: the candidates (context-contract §3, §10.4). Gathering is mandatory: invalid input
 * is the caller's 400, an unavailable gather degrades into an empty answer with the failure in
 * `retrieval_errors`. The cross-encoder may then re-order them (`score` stays the retrieval
 * score the contract reports).
 */
import type { gather } from '@ctxmesh/proto';
import { Code, CtxError, isCode } from '@ctxmesh/rpc';
import { rerankOrder } from '../rerank';
import { statusOutcome } from '../stages';
import { CONTEXT_STAGES, factsOf, type ContextRun } from './run';
import type { Turn } from './session';

/** Step 3: gather for the planned queries, leaving out exclude_uris and the cooled URIs. */
export async function gatherCandidates(run: ContextRun, queries: string[], turn: Turn): Promise<gather.GatherCandidatesResponse> {
  const { input, ports, runner, budget } = run;
  const evidence = input.packing === 'evidence';
  try {
    return await runner.mandatory('gather', (b) =>
      ports.gather.gatherCandidates(
        {
          identity: input.identity,
          queries,
          imageUrl: input.imageUrl,
          filter: input.filter,
          limit: input.limit,
          scoreThreshold: input.scoreThreshold,
          bucketed: input.quotas !== null,
          quotas: input.quotas ?? [],
          peerScope: input.peerScope,
          otherPeerPenalties: input.otherPeerPenalties,
          excludedUris: [...new Set([...input.excludeUris, ...turn.cooled])],
          asOfMs: input.asOfMs,
          // "" keeps the contract's gathering byte for byte.
          packing: evidence ? input.packing : '',
          maxTokens: input.maxTokens,
          tokenizer: input.tokenizer,
          explain: input.explain,
          cooledUris: input.explain ? turn.cooled : [],
        },
        b,
      ),
    );
  } catch (err) {
    if (budget.exhausted || isCode(err, Code.INVALID_ARGUMENT, Code.DEADLINE_EXCEEDED, Code.CANCELLED)) throw err;
    const e = err as CtxError;
    return { candidates: [], searched: [], excluded: 0, retrievalErrors: [`${e.reason ?? 'Error'}: ${e.message}`.slice(0, 200)], evidence: undefined, fates: [] };
  }
}

/** Step 3b: re-order the candidates by cross-encoder score when the stage table lets rerank run. */
export async function rerankCandidates(run: ContextRun, candidates: gather.Candidate[]): Promise<gather.Candidate[]> {
  const { input, ports, runner } = run;
  const documents = candidates.map((c, i) => ({ id: String(i), text: c.abstract || c.uri }));
  const out = await runner.stage(CONTEXT_STAGES.rerank, factsOf(run, { candidates: candidates.length }), async (b, timeoutMs) =>
    statusOutcome('rerank', await ports.rewrite.rerank({ query: input.query, documents, timeoutMs }, b)),
  );
  if (!out) return candidates;
  return rerankOrder(candidates, out.scores, (_c, i) => String(i)).map((r) => r.item);
}

