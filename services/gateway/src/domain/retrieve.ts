/**
 * Body validation of `POST /api/v1/retrieve` (retrieve-contract "Request"): the fields, their
 * defaults and bounds; unknown fields (also inside `stages`) and out-of-range values are a 400
 * naming the field. Also the `as_of` instant shared with `/find` and `/search`.
 */
import { WORKSPACE_SLUG } from '@ctxmesh/kernel';
import { RequestValidationError, type ValidationIssue } from './errors';
import { parseTimeBound } from './filter';
import { bool, fields, float, intRange, literal, model, nullable, str, validateModel, type Loc, type Validator } from './schema';

/** Optional stages a request may ask for. */
export const RETRIEVE_STAGE_NAMES = ['query_rewrite', 'graph_assist', 'rerank'] as const;
/** An optional stage name. */
export type RetrieveStageName = (typeof RETRIEVE_STAGE_NAMES)[number];

/** Tokenizers a retrieve may name (the context mode's). */
export const RETRIEVE_TOKENIZERS = ['estimate', 'o200k_base', 'cl100k_base'] as const;

/** End-user subjects: one URI segment (`viking://user/{subject}/memories`). */
export const SUBJECT = /^[A-Za-z0-9_.@-]{1,128}$/;

const fail = (loc: Loc, msg: string, type: string) => ({ ok: false as const, issues: [{ loc: [...loc], msg, type }] });

/** A number in 0..1 (finite). */
const unitInterval: Validator<number> = {
  label: 'float',
  check(v, loc, strict) {
    const r = float.check(v, loc, strict);
    if (!r.ok) return r;
    if (!Number.isFinite(r.value)) return fail(loc, 'Input should be a finite number', 'finite_number');
    if (r.value < 0) return fail(loc, 'Input should be greater than or equal to 0', 'greater_than_equal');
    if (r.value > 1) return fail(loc, 'Input should be less than or equal to 1', 'less_than_equal');
    return r;
  },
};

/** A string matching `re`, with `what` in the error. */
function pattern(re: RegExp, what: string): Validator<string> {
  return {
    label: 'str',
    check(v, loc, strict) {
      const r = str.check(v, loc, strict);
      if (!r.ok) return r;
      return re.test(r.value) ? r : fail(loc, `Value error, ${what}`, 'value_error');
    },
  };
}

/** `stages`: an object of booleans over the three stage names; anything else is refused. */
const stagesType: Validator<Partial<Record<RetrieveStageName, boolean>>> = model(
  RETRIEVE_STAGE_NAMES.map((name) => ({ name, type: bool })),
  'stages',
);

/** `RetrieveRequest` fields in declaration order (unknown fields are a 400). */
export const RETRIEVE_FIELDS = fields(
  { name: 'query', type: str, required: true },
  { name: 'workspace', type: nullable(pattern(WORKSPACE_SLUG, "workspace must be a slug: 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit")) },
  { name: 'subject', type: nullable(pattern(SUBJECT, "subject must be 1 to 128 letters, digits, '_', '.', '@' or '-'")) },
  { name: 'top_k', type: intRange({ ge: 1, le: 100 }) },
  { name: 'memory_k', type: intRange({ ge: 0, le: 100 }) },
  { name: 'mmr_lambda', type: nullable(unitInterval) },
  { name: 'max_per_document', type: intRange({ ge: 1, le: 2 ** 31 - 1 }) },
  { name: 'as_of', type: nullable(str) },
  { name: 'token_budget', type: nullable(intRange({ ge: 1, le: 2 ** 31 - 1 })) },
  { name: 'time_budget_ms', type: nullable(intRange({ ge: 1, le: 2 ** 31 - 1 })) },
  { name: 'stages', type: stagesType },
  { name: 'tokenizer', type: literal(...RETRIEVE_TOKENIZERS) },
  // ctxmesh addition (issue 14): answer with `explain`.
  { name: 'explain', type: bool },
);

/** A validated retrieve body with the contract's defaults applied. */
export interface RetrieveParams {
  /** Non-blank query. */
  query: string;
  /** Workspace from the body, or null (then `X-Workspace`, the active one, `default`). */
  workspace: string | null;
  /** Subject of the memories array, or null for the caller's user. */
  subject: string | null;
  /** Passages wanted. @default 8 */
  topK: number;
  /** Memories wanted. @default 5 */
  memoryK: number;
  /** MMR trade-off, or null for no MMR pass. @default null */
  mmrLambda: number | null;
  /** Passages per document. @default 2 */
  maxPerDocument: number;
  /** Valid-time instant, ms since the epoch, or null for now. */
  asOfMs: number | null;
  /** Ceiling on `tokens_total`, or null for none. */
  tokenBudget: number | null;
  /** Whole-request time budget in ms, or null for none. */
  timeBudgetMs: number | null;
  /** Stages the request names explicitly (the rest follow the configuration). */
  stages: Partial<Record<RetrieveStageName, boolean>>;
  /** Token counter. @default "estimate" */
  tokenizer: (typeof RETRIEVE_TOKENIZERS)[number];
  /** `explain: true`: the answer carries `explain` (absent = false, the answer keeps its bytes). */
  explain?: boolean;
}

const RELATIVE = /^\s*\d+[smhdw]\s*$/;

/**
 * An `as_of` value: an ISO-8601 date (midnight UTC) or timestamp (no offset = UTC; fractions
 * beyond milliseconds cut). The one place the mesh reads `as_of` text: the services get the ms.
 * @param loc where to report a bad value
 * @returns ms since the epoch, or null when absent or blank (= now)
 * @throws RequestValidationError naming `loc` for anything else (relative durations included)
 */
export function parseAsOf(value: string | null | undefined, loc: Loc = ['body', 'as_of']): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const bad = () =>
    new RequestValidationError([{ loc: [...loc], msg: `Value error, as_of must be an ISO-8601 date (YYYY-MM-DD) or timestamp, got ${JSON.stringify(value)}`, type: 'value_error' }]);
  if (RELATIVE.test(value)) throw bad();
  try {
    return parseTimeBound(value, 'since', 0);
  } catch {
    throw bad();
  }
}

/**
 * Validate a retrieve body.
 * @throws RequestValidationError (400) for a missing or blank `query`, wrong types, values out
 *   of range, unknown fields (also inside `stages`), bad slugs, subjects or `as_of`
 */
export function validateRetrieveBody(body: unknown): RetrieveParams {
  const r = validateModel(body, RETRIEVE_FIELDS);
  if (!r.ok) throw new RequestValidationError(r.issues);
  const v = r.model.values;
  const query = v.query;
  if (query.trim() === '') {
    const issue: ValidationIssue = { loc: ['body', 'query'], msg: 'Value error, query must not be blank', type: 'value_error' };
    throw new RequestValidationError([issue]);
  }
  return {
    query,
    workspace: v.workspace ?? null,
    subject: v.subject ?? null,
    topK: v.top_k ?? 8,
    memoryK: v.memory_k ?? 5,
    mmrLambda: v.mmr_lambda ?? null,
    maxPerDocument: v.max_per_document ?? 2,
    asOfMs: parseAsOf(v.as_of),
    tokenBudget: v.token_budget ?? null,
    timeBudgetMs: v.time_budget_ms ?? null,
    stages: v.stages ?? {},
    tokenizer: v.tokenizer ?? 'estimate',
    ...(v.explain === true ? { explain: true } : {}),
  };
}
