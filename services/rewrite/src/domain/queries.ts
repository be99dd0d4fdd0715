/**
 * Reading planned queries out of a model's answer, and merging them with the original
 * (context-contract §8.1: original first, then each planned query trimmed, non-empty and not
 * already present, at most three in all).
 */

/** Most queries in a plan, the original included (§8.1). */
export const MAX_PLANNED_QUERIES = 3;

/** Strings of a JSON value that holds queries (see {@link parsePlannedQueries}). */
function fromJson(v: unknown, depth = 0): string[] {
  if (depth > 3) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) {
    return v.flatMap((it) => {
      if (typeof it === 'string') return [it];
      if (it && typeof it === 'object') {
        const o = it as Record<string, unknown>;
        const q = o.query ?? o.text ?? o.q;
        return typeof q === 'string' ? [q] : [];
      }
      return [];
    });
  }
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const key of ['queries', 'planned_queries', 'search_queries', 'query_plan', 'plan']) {
      if (key in o) return fromJson(o[key], depth + 1);
    }
    if (typeof o.query === 'string') return [o.query];
  }
  return [];
}

function tryJson(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
  } catch {
    return { ok: false };
  }
}

const FENCE = /```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```/;
const LIST_MARKER = /^(?:[-*•+]|\d{1,2}[.)、])\s*/;
const LABEL = /^(?:query|q|search query|查询)\s*\d*\s*[:：]\s*/i;
const QUOTES = /^["'“”‘’`「『]+|["'“”‘’`」』]+$/g;

/**
 * The queries a model planned, read robustly:
 * 1. a fenced block (```json … ```) is unwrapped;
 * 2. JSON — the whole text, else the outermost `{…}` or `[…]` in it — as `{"queries": […]}`
 *    (also `planned_queries`, `search_queries`, `query_plan`, `plan`), a bare array, and
 *    items that are strings or objects with `query`/`text`/`q`;
 * 3. otherwise lines: when some lines are list items (`- `, `* `, `1.`), only those; labels
 *    such as `Queries:` and `Query 1:` are dropped, and surrounding quotes removed.
 * @returns the candidates in order, untrimmed and possibly empty (merging filters them)
 */
export function parsePlannedQueries(content: string): string[] {
  let text = content.trim();
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1].trim();
  const whole = tryJson(text);
  if (whole.ok) return fromJson(whole.value);
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const a = text.indexOf(open);
    const b = text.lastIndexOf(close);
    if (a >= 0 && b > a) {
      const inner = tryJson(text.slice(a, b + 1));
      if (inner.ok) return fromJson(inner.value);
    }
  }
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  const listed = lines.filter((l) => LIST_MARKER.test(l));
  const picked = listed.length > 0 ? listed : lines;
  const out: string[] = [];
  for (const line of picked) {
    const bare = line.replace(LIST_MARKER, '').replace(LABEL, '').replace(QUOTES, '').trim();
    // A line ending in a colon introduces the list ("Here are the queries:"); it is not one.
    if (bare === '' || /[:：]$/.test(bare) || /^[[{]/.test(bare)) continue;
    out.push(bare);
  }
  return out;
}

/**
 * Original first, then each planned query trimmed, non-empty and not already present,
 * stopping at `max` in all (§8.1).
 * @param max queries in all, the original included. @default 3
 */
export function mergeQueries(original: string, planned: readonly string[], max = MAX_PLANNED_QUERIES): string[] {
  const out = [original];
  for (const p of planned) {
    if (out.length >= max) break;
    const q = p.trim();
    if (q === '' || out.includes(q)) continue;
    out.push(q);
  }
  return out;
}
