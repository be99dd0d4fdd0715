/**
 * Both steps of a context block in one process (the kernel without the mesh): decide the
 * reads, read each content URI once, compute tier texts and plan/render, with either packing.
 */
import { type EvidenceOptions, planEvidenceReadsWith, planEvidenceWith } from './evidence';
import { FrontMatterError } from '../errors';
import { type OverviewOptions, type TierTexts, prepareTierTexts } from './overview';
import type { Packing } from './packing';
import { type PlanOptions, type PlanResult, planAndRenderWith, planReadsWith } from './plan';
import { type Candidate, FragmentPricer } from './pricing';
import { resolveTokenizer } from './tokens';

/** Output of {@link assembleContext}. */
export interface AssembleResult extends PlanResult {
  /** Directories whose sidecar front matter was refused (served without an overview). */
  overviewErrors: Array<{ uri: string; error: FrontMatterError }>;
}

/** Options of {@link assembleContext}. */
export interface AssembleOptions extends OverviewOptions, PlanOptions, Omit<EvidenceOptions, 'fates'> {
  /** `compat` (§5 as written) or `evidence` (see `./evidence`). @default "compat" */
  packing?: Packing;
}

/**
 * Both steps in one process: decide the reads, read each content URI once through `readBody`,
 * compute tier texts and plan/render, with either packing.
 * @param readBody returns the raw content of a content URI, or `null` when the read fails
 * @param opts the packing (and, for evidence, its priors and best score), the code outliner,
 *   and whether to return fates
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function assembleContext(
  candidates: readonly Candidate[],
  readBody: (contentUri: string, candidate: Candidate) => string | null | undefined,
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
  opts: AssembleOptions = {},
): AssembleResult {
  const evidence = opts.packing === 'evidence';
  // One pricer for both steps: abstracts priced for the read decision are not priced again.
  const pricer = new FragmentPricer(resolveTokenizer(tokenizer), evidence ? 'strict' : 'reference');
  const plan = evidence ? planEvidenceReadsWith(pricer, candidates, maxTokens, detail, opts) : planReadsWith(pricer, candidates, maxTokens, detail);
  const bodies = new Map<string, string | null | undefined>();
  const texts: Array<TierTexts | null> = candidates.map(() => null);
  const overviewErrors: AssembleResult['overviewErrors'] = [];
  for (const r of plan.reads) {
    const candidate = candidates[r.index];
    if (!bodies.has(r.contentUri)) bodies.set(r.contentUri, readBody(r.contentUri, candidate));
    const t = prepareTierTexts(candidate, bodies.get(r.contentUri), opts);
    if (t.overviewError) overviewErrors.push({ uri: candidate.uri, error: t.overviewError });
    texts[r.index] = t;
  }
  const items = candidates.map((candidate, i) => ({ candidate, texts: texts[i] }));
  const result = evidence
    ? planEvidenceWith(pricer, items, maxTokens, detail, opts)
    : planAndRenderWith(pricer, items, maxTokens, detail, opts);
  return { ...result, overviewErrors };
}
