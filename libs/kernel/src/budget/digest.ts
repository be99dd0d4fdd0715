/**
 * Digest normalisation (context-contract §8.2 `normalize_digest`) and the rewrite status it
 * implies, with the citation allowlist of served URIs.
 */
import { PY_WS_CLASS, codePointPrefix, pyRstrip, pySplitlines, pyStrip } from './python';
import { neutralizeEnvelope } from './render';

/** The model's answer when nothing in the context is relevant. */
export const NO_RELEVANT_MEMORY = 'NO_RELEVANT_MEMORY';
/** First line of every digest. */
export const DIGEST_HEADER = 'OpenViking memory digest:';
/** Maximum code points of one bullet. */
export const MAX_BULLET_CHARS = 500;

/** Outcome of a rewrite whose model call returned (timeouts are decided by the caller). */
export type DigestStatus = 'ok' | 'no_relevant' | 'failed';

/** Output of {@link normalizeDigest}. */
export interface DigestResult {
  /** `"OpenViking memory digest:\n- …"`, or `""` when no bullet survived. */
  readonly digest: string;
  /** `ok` with a digest; `no_relevant` when the raw output is exactly `NO_RELEVANT_MEMORY`; else `failed`. */
  readonly status: DigestStatus;
}

const BULLET = new RegExp(`^[-*][${PY_WS_CLASS}]+`);
const CITATION = new RegExp(`viking://[^${PY_WS_CLASS}<>"')\\]]+`, 'g');

function isNoRelevant(trimmed: string): boolean {
  return trimmed.toUpperCase() === NO_RELEVANT_MEMORY;
}

/**
 * Normalise a digest rewrite's raw model output (§8.2 steps 1–5):
 * 1. trim; empty or exactly `NO_RELEVANT_MEMORY` (case-insensitive) → no digest;
 * 2. per line: trim, keep lines starting with `-`/`*` + whitespace, rewrite that marker to
 *    `- `, cut to 500 code points and right-trim;
 * 3. citations = every `viking://` run up to whitespace, `<`, `>`, `"`, `'`, `)` or `]`; a
 *    bullet without citations or with any citation outside `allowedUris` is dropped;
 * 4. keep at most `max(1, maxBullets)` bullets;
 * 5. digest = header line + bullets joined by `\n`, the plugins' envelope tag defused
 *    ({@link neutralizeEnvelope}: a ctxmesh deviation, so a quoted `</openviking-context>` cannot
 *    close the block the plugin wraps the digest in).
 * @param allowedUris the URIs of the served entries (the citation allowlist)
 * @param maxBullets requested bullet limit, default 6
 */
export function normalizeDigest(raw: string | null | undefined, allowedUris: Iterable<string>, maxBullets = 6): DigestResult {
  const text = pyStrip(raw ?? '');
  if (text === '' || isNoRelevant(text)) {
    return { digest: '', status: text !== '' ? 'no_relevant' : 'failed' };
  }
  const allow = new Set(allowedUris);
  const limit = Math.max(1, Math.trunc(maxBullets) || 1);
  const bullets: string[] = [];
  for (const rawLine of pySplitlines(text)) {
    const line = pyStrip(rawLine);
    const marker = BULLET.exec(line);
    if (!marker) continue;
    const bullet = pyRstrip(codePointPrefix(`- ${line.slice(marker[0].length)}`, MAX_BULLET_CHARS));
    const cites = bullet.match(CITATION);
    if (!cites || !cites.every((u) => allow.has(u))) continue;
    bullets.push(bullet);
    if (bullets.length >= limit) break;
  }
  if (bullets.length === 0) return { digest: '', status: 'failed' };
  return { digest: neutralizeEnvelope(`${DIGEST_HEADER}\n${bullets.join('\n')}`), status: 'ok' };
}
