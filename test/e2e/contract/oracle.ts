/**
 * An independent reading of context-contract §5.1 and §6.1, written from the spec text and
 * not from `@ctxmesh/kernel`, so the suite does not check the kernel against itself: the
 * CJK-aware estimator, Python `%.2f`, attribute escaping, tag neutralisation and fragments.
 * Exact tokenizers (`o200k_base`, `cl100k_base`) are counted with `gpt-tokenizer` through the
 * kernel's `countTokens` (the tokenizer is the reference there, not the kernel).
 */
import { countTokens } from '@ctxmesh/kernel';
import type { ContextJson, EntryJson } from './harness';

/** §5.1 code point ranges weighing 1.5 tokens. */
const CJK_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xf900, 0xfaff],
  [0x20000, 0x2ebef],
  [0x3040, 0x30ff],
  [0x31f0, 0x31ff],
  [0xac00, 0xd7af],
  [0x1100, 0x11ff],
  [0x3130, 0x318f],
  [0xff00, 0xffef],
  [0x3000, 0x303f],
];

/**
 * §5.1: `ceil(Σ weight(code point))`, weight 1.5 in the CJK ranges, 2.0 above U+FFFF, else 0.25.
 * Sums are kept in quarters so they stay exact.
 */
export function estimate(s: string): number {
  let quarters = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (CJK_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi)) quarters += 6;
    else if (cp > 0xffff) quarters += 8;
    else quarters += 1;
  }
  return Math.ceil(quarters / 4);
}

/** Tokens of `s` in the named tokenizer (`estimate` = {@link estimate}). */
export function tokensOf(s: string, tokenizer: string): number {
  return tokenizer === 'estimate' ? estimate(s) : countTokens(s, tokenizer);
}

/**
 * Python's `"%.2f" % x`: the exact binary value rounded half-to-even at two decimals
 * (0.125 → "0.12", 0.375 → "0.38", −0.004 → "-0.00").
 */
export function pyFixed2(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`not finite: ${x}`);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const expBits = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  // |x| = m · 2^e exactly.
  const m = expBits === 0 ? frac : frac | (1n << 52n);
  const e = (expBits === 0 ? 1 : expBits) - 1075;
  let hundredths: bigint;
  if (e >= 0) {
    hundredths = m * 100n * (1n << BigInt(e));
  } else {
    const den = 1n << BigInt(-e);
    const num = m * 100n;
    const q = num / den;
    const twice = 2n * (num % den);
    hundredths = twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
  }
  const int = hundredths / 100n;
  const dec = (hundredths % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${int}.${dec}`;
}

/** §6.1 attribute escaping: `&`, then `"`, then `<`; `>` and `'` stay. */
export function escapeAttribute(v: string): string {
  return v.split('&').join('&amp;').split('"').join('&quot;').split('<').join('&lt;');
}

/** Python's `str.isspace()` set, which the reference's `\s` matches (JS `\s` differs: U+FEFF in, U+001C–U+001F and U+0085 out). */
const PY_WHITESPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const FORGED = new RegExp(`<(\\/?)memory(?=[${PY_WHITESPACE}/>])`, 'gi');
const ENVELOPE = new RegExp(`<[${PY_WHITESPACE}]*(\\/?)[${PY_WHITESPACE}]*openviking-context(?![A-Za-z0-9_:.\\-])`, 'gi');

/**
 * §6.1 tag neutralisation as the reference does it: `<memory` / `</memory` (any case) followed by
 * whitespace, `/` or `>` becomes `<\memory` / `<\/memory` (one that ends the body is left: the
 * reference's gap, kept byte for byte); and §0.6, the plugins' envelope tag `<openviking-context`
 * / `</openviking-context` (any case, whitespace after `<` and around `/`) becomes
 * `<\openviking-context` / `<\/openviking-context`.
 */
export function neutralise(body: string): string {
  return neutraliseEnvelope(body.replace(FORGED, (_m, slash: string) => `<\\${slash}memory`));
}

/** §0.6 alone: what `entries[].text` gets (it is otherwise raw, §6.2). */
export function neutraliseEnvelope(text: string): string {
  return text.replace(ENVELOPE, (_m, slash: string) => `<\\${slash}openviking-context`);
}

/** §6.1 fragment of one entry. */
export function fragmentOf(e: Pick<EntryJson, 'uri' | 'category' | 'score' | 'detail' | 'text'>): string {
  const head = `<memory uri="${escapeAttribute(e.uri)}" type="${escapeAttribute(e.category)}" score="${pyFixed2(e.score)}" detail="${e.detail}"`;
  return e.text === '' ? `${head} />` : `${head}>\n${neutralise(e.text)}\n</memory>`;
}

/** §6.1 `rendered`: the fragments joined by one `\n`. */
export function renderedOf(entries: readonly EntryJson[]): string {
  return entries.map(fragmentOf).join('\n');
}

/** §5.1/§5.3 cost of the returned entries: every fragment, plus one separator per entry after the first. */
export function usedTokensOf(entries: readonly EntryJson[], tokenizer: string): number {
  return entries.reduce((sum, e, i) => sum + tokensOf(fragmentOf(e), tokenizer) + (i > 0 ? 1 : 0), 0);
}

/** §5.2 per-entry cap. */
export function capOf(maxTokens: number, n: number): number {
  return Math.max(1, Math.floor(maxTokens / Math.max(1, n)) * 2);
}

/** Real opening tags in a rendered block (neutralised ones start `<\`). */
export function openingTags(rendered: string): number {
  return (rendered.match(new RegExp(`<memory[${PY_WHITESPACE}/>]`, 'gi')) ?? []).length;
}

/** Real closing tags in a rendered block: `</memory>` pairs plus self-closing ` />` heads. */
export function closingTags(rendered: string): number {
  const pairs = (rendered.match(new RegExp(`<\\/memory(?=[${PY_WHITESPACE}/>]|$)`, 'gi')) ?? []).length;
  const selfClosing = (rendered.match(/<memory uri="[^"]*" type="[^"]*" score="[^"]*" detail="uri" \/>/g) ?? []).length;
  return pairs + selfClosing;
}

/** URIs named by the real opening tags of a rendered block, unescaped. */
export function renderedUris(rendered: string): string[] {
  const out: string[] = [];
  for (const m of rendered.matchAll(/<memory uri="([^"]*)" type="/g)) {
    out.push(m[1].split('&lt;').join('<').split('&quot;').join('"').split('&amp;').join('&'));
  }
  return out;
}

/**
 * Every invariant of §5–§6 that holds for any context result, as a list of violations
 * (empty = consistent): rendered = the entries' fragments, used_tokens = their cost in the
 * tokenizer and ≤ max_tokens, one real opening and closing tag per entry, every rendered URI
 * among the entries, returned/tier_counts/cap consistent with the entries.
 */
export function violations(result: ContextJson, tokenizer: string): string[] {
  const out: string[] = [];
  const { entries, rendered, stats } = result;
  const want = renderedOf(entries);
  if (rendered !== want) out.push(`rendered differs from the entries' fragments:\n${rendered}\n---\n${want}`);
  const used = usedTokensOf(entries, tokenizer);
  if (stats.used_tokens !== used) out.push(`used_tokens ${stats.used_tokens} != recomputed ${used}`);
  if (!(stats.used_tokens <= stats.max_tokens)) out.push(`used_tokens ${stats.used_tokens} > max_tokens ${stats.max_tokens}`);
  // The reference's gap (§0.6): a text ending in `<memory` / `</memory` is left, and the
  // fragment's newline makes it a real tag.
  const opensAtEnd = entries.filter((e) => /<memory$/i.test(e.text)).length;
  const closesAtEnd = entries.filter((e) => /<\/memory$/i.test(e.text)).length;
  if (openingTags(rendered) !== entries.length + opensAtEnd) out.push(`${openingTags(rendered)} opening tags for ${entries.length} entries`);
  if (closingTags(rendered) !== entries.length + closesAtEnd) out.push(`${closingTags(rendered)} closing tags for ${entries.length} entries`);
  const uris = new Set(entries.map((e) => e.uri));
  for (const u of renderedUris(rendered)) if (!uris.has(u)) out.push(`rendered names ${u}, not an entry`);
  if (stats.returned !== entries.length) out.push(`returned ${stats.returned} != ${entries.length} entries`);
  const cap = capOf(stats.max_tokens, stats.candidates);
  if (stats.per_entry_cap !== cap) out.push(`per_entry_cap ${stats.per_entry_cap} != ${cap}`);
  if (stats.returned + stats.dropped + stats.deduped !== stats.candidates) out.push('returned + dropped + deduped != candidates');
  // The cap bounds every placed tier but uri; only pass C (spare) may exceed it, and only to full.
  let overCap = 0;
  for (const e of entries) {
    if (e.detail === 'uri') continue;
    const n = tokensOf(fragmentOf(e), tokenizer);
    if (n <= cap) continue;
    if (e.detail === 'full') overCap += 1;
    else out.push(`${e.uri} at ${e.detail} costs ${n} > cap ${cap}`);
  }
  if (overCap > stats.fill.spare_upgrades) out.push(`${overCap} full entries over the cap but spare_upgrades ${stats.fill.spare_upgrades}`);
  const tiers: Record<string, number> = {};
  for (const e of entries) tiers[e.detail] = (tiers[e.detail] ?? 0) + 1;
  if (JSON.stringify(tiers) !== JSON.stringify(stats.tier_counts)) out.push(`tier_counts ${JSON.stringify(stats.tier_counts)} != ${JSON.stringify(tiers)}`);
  return out;
}
