// @ts-check
/**
 * The inspector's pure parts (no DOM): the page's state in the URL, the request it sends, the
 * budget bar's segments, the stage time line. `inspect.js` draws them; the gateway's unit tests
 * import this file directly.
 */

/** Tiers from cheapest to deepest; also the bar's colour classes (`tier-<name>`). */
export const TIERS = ['uri', 'abstract', 'overview', 'full'];

/**
 * The form's fields, as they appear in the URL (`?q=…&session=…`), with their defaults. A link
 * with `q` reproduces the query: the page runs it on load.
 * @type {Readonly<Record<string, string>>}
 */
export const DEFAULTS = Object.freeze({
  q: '',
  account: '',
  user: '',
  session: '',
  purpose: '',
  max_tokens: '1600',
  detail: 'auto',
  packing: '',
  tokenizer: 'estimate',
  dedup_turns: '0',
  limit: '',
  view: 'query',
  trace: '',
});

/**
 * @typedef {Record<keyof typeof DEFAULTS, string>} PageState
 */

/**
 * Read the page state from a query string; unknown keys are ignored, missing ones take
 * {@link DEFAULTS}.
 * @param {string} search `location.search`, with or without the leading `?`
 * @returns {PageState}
 */
export function stateFromQuery(search) {
  const p = new URLSearchParams(search);
  /** @type {Record<string, string>} */
  const s = {};
  for (const [k, d] of Object.entries(DEFAULTS)) s[k] = p.get(k) ?? d;
  return /** @type {PageState} */ (s);
}

/**
 * The query string of a state: only the fields that differ from the defaults, in
 * {@link DEFAULTS} order, so links stay short and stable.
 * @param {Partial<PageState>} state
 * @returns {string} `?…`, or `""` for the default state
 */
export function queryFromState(state) {
  const p = new URLSearchParams();
  for (const [k, d] of Object.entries(DEFAULTS)) {
    const v = /** @type {Record<string, string | undefined>} */ (state)[k];
    if (v !== undefined && v !== d) p.set(k, v);
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * The context-mode body the page sends for a state: `explain` and `telemetry` always,
 * optional fields only when set (so the server applies its own defaults).
 * @param {PageState} s
 * @returns {Record<string, unknown>}
 */
export function contextBody(s) {
  /** @type {Record<string, unknown>} */
  const body = { query: s.q, mode: 'context', max_tokens: Number(s.max_tokens), explain: true, telemetry: true };
  if (s.session) body.session_id = s.session;
  if (s.purpose) body.purpose = s.purpose;
  if (s.detail && s.detail !== 'auto') body.detail = s.detail;
  if (s.packing) body.packing = s.packing;
  if (s.tokenizer && s.tokenizer !== 'estimate') body.tokenizer = s.tokenizer;
  if (Number(s.dedup_turns) > 0) body.dedup_turns = Number(s.dedup_turns);
  if (s.limit) body.limit = Number(s.limit);
  return body;
}

/**
 * @typedef {{ rank: number | null, uri: string, category: string, origin: string, score: number | null,
 *   ranked_score: number | null, tier: string | null, tokens: Record<string, number | null>, reason: string,
 *   cooled_turn?: number }} ExplainRow
 * @typedef {{ kind: 'entry', index: number, uri: string, tier: string, tokens: number } | { kind: 'separator', tokens: number }} Segment
 */

/**
 * The budget bar: one segment per entry of the block, sized by the tokens of its fragment at
 * the served tier (from `explain`), and the one-token separator before every entry but the
 * first, so the segments add up to `stats.used_tokens`. With the block's token account
 * (`explain.account`, issue 20) each entry is sized by what it took in the block as written,
 * and one separator segment holds the group lines and separators, so a compact block with
 * groups adds up too.
 * @param {Array<{ uri: string, detail: string }>} entries the block's entries, in order
 * @param {ExplainRow[]} rows `explain.candidates`
 * @param {{ used_tokens: number, entries: Array<{ uri: string, text_tokens: number, markup_tokens: number }> } | null} [account]
 * @returns {Segment[]}
 * @throws Error when an entry has no served row with a token count (the answer is inconsistent)
 */
export function budgetSegments(entries, rows, account = null) {
  /** @type {Segment[]} */
  const out = [];
  if (account) {
    const byUri = new Map(account.entries.map((a) => [a.uri, a.text_tokens + a.markup_tokens]));
    let sum = 0;
    entries.forEach((e, index) => {
      const tokens = byUri.get(e.uri);
      if (typeof tokens !== 'number') throw new Error(`entry ${e.uri} is not in the token account`);
      sum += tokens;
      out.push({ kind: 'entry', index, uri: e.uri, tier: e.detail, tokens });
    });
    if (account.used_tokens > sum) out.push({ kind: 'separator', tokens: account.used_tokens - sum });
    return out;
  }
  const served = rows.filter((r) => r.reason === 'served');
  entries.forEach((e, index) => {
    const row = served.find((r) => r.uri === e.uri && r.tier === e.detail);
    const tokens = row?.tokens?.[e.detail];
    if (typeof tokens !== 'number') throw new Error(`entry ${e.uri} has no served row with a ${e.detail} token count`);
    if (index > 0) out.push({ kind: 'separator', tokens: 1 });
    out.push({ kind: 'entry', index, uri: e.uri, tier: e.detail, tokens });
  });
  return out;
}

/**
 * Share of the bar a token count takes, in percent of `max_tokens`, rounded to 0.001.
 * @param {number} tokens
 * @param {number} maxTokens
 */
export function percentOf(tokens, maxTokens) {
  return maxTokens > 0 ? Math.round((tokens / maxTokens) * 100000) / 1000 : 0;
}

/**
 * The stage time line: each stage's offset and width in percent of the whole span.
 * @param {Array<{ stage: string, outcome: string, start_ms: number, ms: number }>} stages
 * @returns {Array<{ stage: string, outcome: string, left: number, width: number, ms: number }>}
 */
export function timeline(stages) {
  const end = Math.max(0.001, ...stages.map((s) => s.start_ms + s.ms));
  return stages.map((s) => ({ stage: s.stage, outcome: s.outcome, ms: s.ms, left: percentOf(s.start_ms, end), width: Math.max(0.5, percentOf(s.ms, end)) }));
}

/**
 * The reason column of a row: the reason, with the turn for a cooled URI.
 * @param {ExplainRow} row
 */
export function reasonText(row) {
  return row.reason === 'cooled' && row.cooled_turn !== undefined ? `cooled (served turn ${row.cooled_turn})` : row.reason.replace(/_/g, ' ');
}
