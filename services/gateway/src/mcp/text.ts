/**
 * What the MCP tools return to the model: plain text (context-contract §1.5).
 */
import type { ContextResultJson, ListHitJson, ListResultJson } from '../mapping/search';

/** Text of a search that found nothing. */
export const NO_CONTEXT_TEXT = 'No matching context found.';

/**
 * Context mode (§1.5): the digest if non-blank, else `rendered` if non-blank, else
 * {@link NO_CONTEXT_TEXT}. Returned verbatim (not trimmed), as HTTP would return them.
 */
export function contextText(result: Pick<ContextResultJson, 'digest' | 'rendered'>): string {
  if (result.digest.trim() !== '') return result.digest;
  if (result.rendered.trim() !== '') return result.rendered;
  return NO_CONTEXT_TEXT;
}

/** `0.8234` → `"0.82"` (a score as the rendered block prints it). */
function score2(s: number): string {
  return Number.isFinite(s) ? s.toFixed(2) : '0.00';
}

function hitLines(h: ListHitJson): string[] {
  const head = `- ${h.uri} (${h.context_type}, level ${h.level}, score ${score2(h.score)})`;
  const abstract = h.abstract.trim().replace(/\s*\n\s*/g, ' ');
  return abstract === '' ? [head] : [head, `  ${abstract}`];
}

/**
 * List mode: one block per bucket that has hits (`memories`, `resources`, `skills`, in that
 * order), each hit as `- <uri> (<context_type>, level <n>, score <0.00>)` plus its abstract
 * on the next line, so a model can pick a URI for the `read` tool; {@link NO_CONTEXT_TEXT}
 * when there is no hit.
 */
export function listText(result: ListResultJson): string {
  const blocks: string[] = [];
  for (const bucket of ['memories', 'resources', 'skills'] as const) {
    const hits = result[bucket];
    if (hits.length === 0) continue;
    blocks.push([`${bucket}:`, ...hits.flatMap(hitLines)].join('\n'));
  }
  return blocks.length === 0 ? NO_CONTEXT_TEXT : blocks.join('\n\n');
}
