/**
 * Render (context-contract §6.1–§6.2): `<memory>` fragments, attribute escaping, tag
 * neutralisation and the entry JSON.
 */
import { PY_WS_CLASS, formatFixed2 } from './python';
import type { Tier } from './tiers';

/**
 * Escape an attribute value: `&` → `&amp;`, `"` → `&quot;`, `<` → `&lt;` (in that order; `>`
 * and `'` are kept).
 */
export function escapeAttr(value: string): string {
  if (!/[&"<]/.test(value)) return value;
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * How forged tags in a body are defused:
 * - `reference`: exactly as the reference kernel (§6.1, compat): `<memory`/`</memory` followed
 *   by whitespace, `/` or `>`; one that ends the body is left as it is, since nothing follows it;
 * - `strict` (evidence): the same, and also a `<memory`/`</memory` that ends the body, which the
 *   fragment's own newline would otherwise complete into a real tag, and the evidence block's
 *   group tag `<memories`/`</memories` (compact.ts) in the same positions.
 */
export type Neutralization = 'reference' | 'strict';

// `<` + optional `/` + `memory` in any case, followed by Python whitespace, `/` or `>` (and,
// strict, the end of the body).
const FORGED_TAG = new RegExp(`<(/?)memory(?=[${PY_WS_CLASS}/>])`, 'gi');
const FORGED_TAG_STRICT = new RegExp(`<(/?)(memory|memories)(?=[${PY_WS_CLASS}/>]|$)`, 'gi');

// The plugins' envelope tag: `<` and an optional `/`, with any whitespace around the slash,
// then `openviking-context` in any case, not followed by another tag-name character.
const ENVELOPE_TAG = new RegExp(`<[${PY_WS_CLASS}]*(/?)[${PY_WS_CLASS}]*openviking-context(?![A-Za-z0-9_:.\\-])`, 'gi');

/**
 * Defuse the harness plugins' own envelope tag in served text (a ctxmesh deviation listed in
 * the contract's header, beside §6.1): every `<openviking-context` / `</openviking-context`
 * (case-insensitive, whitespace tolerated after `<` and around `/`) becomes
 * `<\openviking-context` / `<\/openviking-context`, so stored text cannot close the block a
 * plugin wraps around `rendered` or `digest`. `<openviking-contexts>` is another tag and stays.
 */
export function neutralizeEnvelope(text: string): string {
  if (!text.includes('<')) return text;
  return text.replace(ENVELOPE_TAG, (_m, slash: string) => `<\\${slash}openviking-context`);
}

/**
 * Defuse forged tags in a body: `<memory …>`/`</memory>` become `<\memory`/`<\/memory` with the
 * word lower-cased, so the only real tags in `rendered` are the entries' own (`<memoryX>` and
 * `< memory>` are not tags and stay as they are); and the plugins' envelope tag is defused as
 * {@link neutralizeEnvelope} does, in both modes.
 * @param mode `reference` (compat, byte-identical to the reference for `<memory`) or `strict` @default "reference"
 */
export function neutralizeTags(body: string, mode: Neutralization = 'reference'): string {
  if (!body.includes('<')) return body;
  if (mode === 'strict') return neutralizeEnvelope(body.replace(FORGED_TAG_STRICT, (_m, slash: string, word: string) => `<\\${slash}${word.toLowerCase()}`));
  return neutralizeEnvelope(body.replace(FORGED_TAG, (_m, slash: string) => `<\\${slash}memory`));
}

/** What a fragment shows of one entry. */
export interface FragmentInput {
  readonly uri: string;
  readonly category: string;
  readonly score: number;
  readonly detail: Tier;
  /** Tier text (raw; neutralised here); `""` renders the self-closing form. */
  readonly text: string;
}

/**
 * The opening tag of an entry without its closing `>` or ` />`:
 * `<memory uri="U" type="C" score="S" detail="D"`, score as Python `%.2f`.
 */
export function fragmentHead(uri: string, category: string, score: number, detail: Tier): string {
  return `<memory uri="${escapeAttr(uri)}" type="${escapeAttr(category)}" score="${formatFixed2(score)}" detail="${detail}"`;
}

/**
 * Complete a fragment from its {@link fragmentHead}: `head>\nbody\n</memory>` with the
 * neutralised text, or `head />` when the text is `""`.
 * @param mode how the body is defused @default "reference"
 */
export function completeFragment(head: string, text: string, mode: Neutralization = 'reference'): string {
  return text === '' ? `${head} />` : `${head}>\n${neutralizeTags(text, mode)}\n</memory>`;
}

/**
 * One rendered fragment (§6.1): `<memory uri=… type=… score=… detail=…>\nbody\n</memory>`
 * with text, self-closing without.
 */
export function renderFragment(e: FragmentInput): string {
  return renderFragmentWith(e, 'reference');
}

/** {@link renderFragment} with the given neutralisation (`strict` for the evidence packing). */
export function renderFragmentWith(e: FragmentInput, mode: Neutralization): string {
  return completeFragment(fragmentHead(e.uri, e.category, e.score, e.detail), e.text, mode);
}

/** One entry of the context result, keys in wire order (§6.2). */
export interface ContextEntry {
  /** Node URI (the directory, never the sidecar). */
  readonly uri: string;
  readonly category: string;
  /** Raw retrieval score. */
  readonly score: number;
  /** Served tier. */
  readonly detail: Tier;
  /**
   * Tier text as stored, `<memory` tags left as they are (§6.2), the plugins' envelope tag
   * defused ({@link neutralizeEnvelope}); `""` for `uri`.
   */
  readonly text: string;
  readonly origin: string;
}

/**
 * `rendered` (§6.1): the entries' fragments joined by `\n`; `""` for no entries.
 * @param mode how bodies are defused @default "reference"
 */
export function renderEntries(entries: readonly FragmentInput[], mode: Neutralization = 'reference'): string {
  return entries.map((e) => renderFragmentWith(e, mode)).join('\n');
}
