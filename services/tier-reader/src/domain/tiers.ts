/**
 * ReadTiers (context-contract §4.1, §4.4, §5.4): the kernel decides which candidates need a
 * body (`planReads`, or `planEvidenceReads` for the evidence packing); each distinct content URI is read once (directories read
 * `{uri}/.overview.md`), under the candidate's read context, with bounded concurrency; the
 * kernel turns each raw body into the overview and full texts (`prepareTierTexts`).
 */
import { planEvidenceReads, planReads, prepareTierTexts, type Candidate, type CodeOutliner, type Packing } from '@ctxmesh/kernel';
import { chunk, mapConcurrent } from './pool';

/** A candidate as the tier reader needs it. */
export interface TierCandidate {
  /** Node URI (a directory, never its sidecar). */
  uri: string;
  /** Category (§2.3). */
  category: string;
  /** Stored abstract ("" when none). */
  abstract: string;
  /** Directory hit. */
  isDirectory: boolean;
  /** Read with the open context (other-peer hits). */
  openContext: boolean;
  /** Raw score (sizes the fragment in the read decision). */
  score: number;
  /** Score after the other-peer penalty (evidence: compared with the relevance floor). @default score */
  rankedScore?: number;
  /** The overview the index stored, "" when unknown (evidence reads no body for an overview it has). */
  storedOverview?: string;
}

/**
 * Reads raw bodies by content URI under one read context. Missing or invisible URIs are
 * `null`; a thrown error marks every URI of the call as failed.
 */
export type BodyReader = (contentUris: string[], openContext: boolean) => Promise<Array<string | null>>;

/** Inputs of {@link readTiers}. */
export interface TierReadInput {
  /** Candidates in rank order. */
  candidates: readonly TierCandidate[];
  /** Requested budget (the kernel coerces it). */
  maxTokens: number;
  /** Normalised `detail` (null, a tier, or a per-category object). */
  detail: unknown;
  /** Tokenizer of the read decision. @default "estimate" */
  tokenizer?: string;
  /** Code-skeleton extractor, or null to treat code files as documents. */
  outliner: CodeOutliner | null;
  /** `compat` reads what §5.4 says; `evidence` what the evidence packing needs. @default "compat" */
  packing?: Packing;
  /** Evidence: the request's best ranked score (sets the relevance floor); null = best candidate. */
  bestScore?: number | null;
}

/** Tuning of {@link readTiers}. */
export interface ReadOptions {
  /** Store calls in flight at most. @default 8 */
  concurrency?: number;
  /** Content URIs per store call at most. @default 16 */
  batchSize?: number;
}

/** Why a needed body produced no texts. */
export type ReadNote = '' | 'not_found' | 'read_failed' | 'bad_front_matter';

/** Tier texts of one candidate. */
export interface TierTextsOut {
  /** True when the body was needed and read. */
  read: boolean;
  /** Overview ("" when unavailable). */
  overview: string;
  /** Full text ("" when unavailable, always for directories). */
  full: string;
  /** Why a needed read produced nothing. */
  note: ReadNote;
}

/** Output of {@link readTiers}. */
export interface TierReadResult {
  /** One item per candidate, in request order. */
  items: TierTextsOut[];
  /** Distinct content reads made (each content URI once per read context). */
  reads: number;
}

const FAILED = Symbol('read failed');
const EMPTY: TierTextsOut = Object.freeze({ read: false, overview: '', full: '', note: '' }) as TierTextsOut;

/**
 * Read what the plan needs and compute tier texts. A body that is missing, invisible or fails
 * to read leaves that candidate's deeper tiers unavailable; it is never an error.
 * @throws UnknownTokenizerError for an unknown tokenizer
 */
export async function readTiers(input: TierReadInput, readBodies: BodyReader, opts: ReadOptions = {}): Promise<TierReadResult> {
  const kernelCandidates: Candidate[] = input.candidates.map((c) => ({
    uri: c.uri,
    category: c.category,
    score: c.score,
    abstract: c.abstract,
    is_directory: c.isDirectory,
    origin: '',
    ranked_score: c.rankedScore ?? c.score,
    stored_overview: c.storedOverview ?? '',
  }));
  const tokenizer = input.tokenizer || 'estimate';
  const plan =
    input.packing === 'evidence'
      ? planEvidenceReads(kernelCandidates, input.maxTokens, input.detail, tokenizer, { bestScore: input.bestScore ?? null })
      : planReads(kernelCandidates, input.maxTokens, input.detail, tokenizer);

  // Distinct content URIs per read context, in first-need order.
  const wanted: Array<{ open: boolean; uris: string[] }> = [
    { open: false, uris: [] },
    { open: true, uris: [] },
  ];
  const keyOf = (open: boolean, uri: string) => `${open ? 1 : 0}\u0000${uri}`;
  const seen = new Set<string>();
  for (const r of plan.reads) {
    const open = input.candidates[r.index].openContext;
    const key = keyOf(open, r.contentUri);
    if (seen.has(key)) continue;
    seen.add(key);
    wanted[open ? 1 : 0].uris.push(r.contentUri);
  }
  const calls = wanted.flatMap((w) => chunk(w.uris, opts.batchSize ?? 16).map((uris) => ({ open: w.open, uris })));
  const bodies = new Map<string, string | null | typeof FAILED>();
  await mapConcurrent(calls, opts.concurrency ?? 8, async ({ open, uris }) => {
    let got: Array<string | null>;
    try {
      got = await readBodies(uris, open);
    } catch {
      // A failed read only costs the deeper tiers (context-contract §1.7 "body-read failures").
      uris.forEach((u) => bodies.set(keyOf(open, u), FAILED));
      return;
    }
    uris.forEach((u, i) => bodies.set(keyOf(open, u), typeof got[i] === 'string' ? got[i] : null));
  });

  const items = input.candidates.map((): TierTextsOut => EMPTY);
  for (const r of plan.reads) {
    const c = input.candidates[r.index];
    const raw = bodies.get(keyOf(c.openContext, r.contentUri));
    if (raw === FAILED || raw === null || raw === undefined) {
      items[r.index] = { read: false, overview: '', full: '', note: raw === FAILED ? 'read_failed' : 'not_found' };
      continue;
    }
    const t = prepareTierTexts({ uri: c.uri, is_directory: c.isDirectory }, raw, { outliner: input.outliner });
    items[r.index] = { read: true, overview: t.overview, full: t.full, note: t.overviewError ? 'bad_front_matter' : '' };
  }
  return { items: items.map((i) => ({ ...i })), reads: seen.size };
}
