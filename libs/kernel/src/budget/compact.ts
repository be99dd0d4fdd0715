/**
 * The `evidence` packing's block format (context-contract §10.6): the same `<memory>` entries
 * as §6.1 with less markup for the same citations. Grammar (`\n` separates pieces):
 *
 *     block  = item *( "\n" item )
 *     item   = entry / group
 *     group  = '<memories base="' BASE '">' "\n" entry 1*( "\n" entry ) "\n" '</memories>'
 *     entry  = open "\n" TEXT "\n" '</memory>' / open-head ' />'   ; the latter a bare URI
 *     open   = open-head ">"
 *     open-head = '<memory uri="' URI '"' [ ' type="' CATEGORY '"' ] [ ' detail="' TIER '"' / ' excerpt="' TIER '"' ]
 *
 * - Inside a group, `URI` is relative: the entry's full URI is `BASE` + `URI` (`BASE` ends with
 *   `/`, `URI` holds no `/`). Outside a group, `URI` is the full `viking://` URI.
 * - `type` is present only when the entry's category is not the one its URI names
 *   ({@link categoryOfUri}); `detail` only when the tier is `overview` or `full`; the
 *   self-closing form is a bare URI (tier `uri`).
 * - `excerpt` marks a query-biased excerpt of tier `TIER` (the tier to read for the rest): whole
 *   sentences, lines and code blocks of it, with `[…]` where text was left out (excerpt.ts).
 * - Attribute values are escaped as §6.1 escapes them; bodies are neutralised strictly, and a
 *   `<memories`/`</memories` in a body is defused like `<memory` (`<\memories`), so the only
 *   real tags are the block's own.
 * - Scores are not rendered (`entries[].score` carries them).
 *
 * A group is written only where it is cheaper than its entries with full URIs; entries of one
 * directory are grouped at the position of the best of them, otherwise the block is in rank
 * order. Every URI the block cites is in `entries[].uri`, in full.
 */
import type { Category } from '../uri';
import { categoryOfUri } from '../uri';
import { type FragmentInput, escapeAttr, neutralizeTags, renderFragment } from './render';
import type { Tier } from './tiers';
import { countTokens } from './tokens';

/** The closing line of a group. */
export const GROUP_CLOSE = '</memories>';

/** The tier an entry without a `detail` attribute is served at. */
export const COMPACT_DEFAULT_DETAIL: Tier = 'abstract';

const SCHEME = 'viking://';

/**
 * The directory a URI groups under (its parent, ending with `/`), or null when it has none below
 * the scheme or the rest would not be a plain name (a trailing `/`, an empty name).
 */
export function directoryOf(uri: string): string | null {
  if (!uri.startsWith(SCHEME)) return null;
  const cut = uri.lastIndexOf('/');
  if (cut < SCHEME.length || cut === uri.length - 1) return null;
  return uri.slice(0, cut + 1);
}

/** The opening line of a group of entries under `base`. */
export function groupOpen(base: string): string {
  return `<memories base="${escapeAttr(base)}">`;
}

/**
 * The opening tag of a compact entry without its closing `>` or ` />`.
 * @param written the URI as written: the full one, or the name relative to its group's base
 * @param fullUri the entry's full URI (decides whether `type` is needed)
 */
export function compactHead(written: string, fullUri: string, category: string, tier: Tier, excerpt = false): string {
  let head = `<memory uri="${escapeAttr(written)}"`;
  if (categoryOfUri(fullUri) !== (category as Category)) head += ` type="${escapeAttr(category)}"`;
  // An excerpt names the tier it was cut from (the one to read for the rest); the
  // self-closing form says `uri` by itself.
  if (excerpt) head += ` excerpt="${tier}"`;
  else if (tier !== COMPACT_DEFAULT_DETAIL && tier !== 'uri') head += ` detail="${tier}"`;
  return head;
}

/** One entry as the block shows it. */
export interface BlockEntry {
  readonly uri: string;
  readonly category: string;
  readonly detail: Tier;
  /** Raw tier text (neutralised here); `""` renders the self-closing form. */
  readonly text: string;
  /** True when `text` is a query-biased excerpt of tier `detail` (excerpt.ts). */
  readonly excerpt?: boolean;
}

/** A compact entry's fragment, its URI written as `written`. */
export function compactFragment(e: BlockEntry, written: string): string {
  const head = compactHead(written, e.uri, e.category, e.detail, e.excerpt === true);
  return e.text === '' ? `${head} />` : `${head}>\n${neutralizeTags(e.text, 'strict')}\n</memory>`;
}

/** One piece of a rendered block: a group's opening or closing line, or an entry's fragment. */
export interface BlockPiece {
  readonly kind: 'open' | 'close' | 'entry';
  readonly text: string;
  /** For an entry: its index in the entries given. */
  readonly entry?: number;
}

/**
 * Lay entries out as block pieces: `groups` says, per directory, whether its entries are written
 * as one group (the planner decides by cost); entries of a grouped directory follow the first
 * of them; everything else keeps the entries' order.
 */
export function layoutBlock(entries: readonly BlockEntry[], grouped: ReadonlySet<string>): BlockPiece[] {
  const pieces: BlockPiece[] = [];
  const done = new Set<string>();
  const dirs = entries.map((e) => directoryOf(e.uri));
  entries.forEach((e, i) => {
    const dir = dirs[i]!;
    if (dir === null || !grouped.has(dir)) {
      pieces.push({ kind: 'entry', text: compactFragment(e, e.uri), entry: i });
      return;
    }
    if (done.has(dir)) return;
    done.add(dir);
    pieces.push({ kind: 'open', text: groupOpen(dir) });
    entries.forEach((m, j) => {
      if (dirs[j] === dir) pieces.push({ kind: 'entry', text: compactFragment(m, m.uri.slice(dir.length)), entry: j });
    });
    pieces.push({ kind: 'close', text: GROUP_CLOSE });
  });
  return pieces;
}

/** The block's text: its pieces joined by `\n`. */
export function joinPieces(pieces: readonly BlockPiece[]): string {
  return pieces.map((p) => p.text).join('\n');
}

/** One entry as {@link parseCompactBlock} reads it back. */
export interface ParsedEntry {
  /** Full URI (the group's base joined). */
  uri: string;
  /** `type` when written, else the category the URI names. */
  category: string;
  detail: Tier;
  /** The body as written (neutralised), `""` for a bare URI. */
  text: string;
  /** True for an excerpt of tier `detail`. */
  excerpt: boolean;
  /** The entry's fragment as written (for counting). */
  fragment: string;
}

/** A block read back: its entries and its pieces, in the order written. */
export interface ParsedBlock {
  entries: ParsedEntry[];
  pieces: BlockPiece[];
}

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
const ATTR = /\s([a-z]+)="([^"]*)"/g;
const GROUP_OPEN = /^<memories base="([^"]*)">$/;
const ENTRY_HEAD = /^<memory((?:\s[a-z]+="[^"]*")*)( \/)?>$/;

/**
 * Read a compact block back (a client's parser, and the tests' oracle): each entry's full URI,
 * category, tier and text, and the pieces the block is counted by.
 * @throws Error when the text does not follow the grammar
 */
export function parseCompactBlock(rendered: string): ParsedBlock {
  const entries: ParsedEntry[] = [];
  const pieces: BlockPiece[] = [];
  if (rendered === '') return { entries, pieces };
  const lines = rendered.split('\n');
  let base: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = GROUP_OPEN.exec(line);
    if (open) {
      if (base !== null) throw new Error(`line ${i + 1}: a group inside a group`);
      base = unescape(open[1]!);
      pieces.push({ kind: 'open', text: line });
      continue;
    }
    if (line === GROUP_CLOSE) {
      if (base === null) throw new Error(`line ${i + 1}: a group closed that was not open`);
      base = null;
      pieces.push({ kind: 'close', text: line });
      continue;
    }
    const head = ENTRY_HEAD.exec(line);
    if (!head) throw new Error(`line ${i + 1}: expected an entry, found ${JSON.stringify(line.slice(0, 80))}`);
    const attrs = new Map<string, string>();
    for (const m of head[1]!.matchAll(ATTR)) attrs.set(m[1]!, unescape(m[2]!));
    const written = attrs.get('uri');
    if (written === undefined) throw new Error(`line ${i + 1}: an entry without uri`);
    const uri = base === null ? written : base + written;
    const cut = attrs.get('excerpt');
    const detail = (head[2] ? 'uri' : (cut ?? attrs.get('detail') ?? COMPACT_DEFAULT_DETAIL)) as Tier;
    const category = attrs.get('type') ?? categoryOfUri(uri);
    let text = '';
    let fragment = line;
    if (!head[2]) {
      const end = lines.indexOf('</memory>', i + 1);
      if (end < 0) throw new Error(`line ${i + 1}: an entry that is never closed`);
      text = lines.slice(i + 1, end).join('\n');
      fragment = lines.slice(i, end + 1).join('\n');
      i = end;
    }
    pieces.push({ kind: 'entry', text: fragment, entry: entries.length });
    entries.push({ uri, category, detail, text, excerpt: cut !== undefined, fragment });
  }
  if (base !== null) throw new Error('a group that is never closed');
  return { entries, pieces };
}

/** Where a block's tokens go (explain's and the bench's token account). */
export interface TokenAccount {
  /** Tokens of the whole block as counted (pieces plus separators). */
  used: number;
  /** Tokens of the entries' texts. */
  text: number;
  /** Everything else: tags, attributes, group lines, separators. */
  markup: number;
  /** Per entry, in the order written. */
  entries: Array<{ uri: string; text: number; markup: number }>;
}

/**
 * The token account of a compact block: each entry's text tokens and the rest of its fragment,
 * and the group lines and separators as markup. Counts are the tokenizer's per piece, so `used`
 * is what `stats.used_tokens` reports for the block.
 */
export function compactTokenAccount(rendered: string, tokenizer = 'estimate'): TokenAccount {
  const { entries, pieces } = parseCompactBlock(rendered);
  const perEntry = entries.map((e) => {
    const text = e.text === '' ? 0 : countTokens(e.text, tokenizer);
    return { uri: e.uri, text, markup: Math.max(0, countTokens(e.fragment, tokenizer) - text) };
  });
  const used = pieces.reduce((a, p) => a + countTokens(p.text, tokenizer), 0) + Math.max(0, pieces.length - 1);
  const text = perEntry.reduce((a, e) => a + e.text, 0);
  return { used, text, markup: used - text, entries: perEntry };
}

/**
 * The token account of a served block in either packing: the compact block's own (evidence),
 * or, for compat, each entry's §6.1 fragment against its text. A block that does not parse
 * (a digest in its place, say) has no account: null.
 */
export function blockTokenAccount(rendered: string, entries: ReadonlyArray<FragmentInput>, packing: string, tokenizer = 'estimate'): TokenAccount | null {
  const tok = tokenizer === '' ? 'estimate' : tokenizer;
  if (packing === 'evidence') {
    try {
      return compactTokenAccount(rendered, tok);
    } catch {
      return null;
    }
  }
  const perEntry = entries.map((e) => {
    const text = e.text === '' ? 0 : countTokens(neutralizeTags(e.text), tok);
    return { uri: e.uri, text, markup: Math.max(0, countTokens(renderFragment(e), tok) - text) };
  });
  const used = perEntry.reduce((a, e) => a + e.text + e.markup, 0) + Math.max(0, perEntry.length - 1);
  const text = perEntry.reduce((a, e) => a + e.text, 0);
  return { used, text, markup: used - text, entries: perEntry };
}
