/**
 * Decompress (§1.7, §3.3): read-only, paged access to the originals behind a block (expanded
 * through distilled parents) or a prune. Nothing is ever put back on the surface.
 */
import { InvalidFieldError, NotFoundError } from './errors';
import type { Block, Prune, Role, SessionView } from './projection';
import { PRUNE_STUB_TEXT } from './events';

/** Default and maximum page size, in items. */
export const MAX_DECOMPRESS_LIMIT = 100;
/**
 * Rendered characters per page (`#<seq> <role>: <text>` plus a newline per item); keeps a page
 * under a host's 8,192-character tool-result pruner. The first item is always included.
 */
export const DECOMPRESS_PAGE_CHARS = 7000;

/** What a ref resolved to. */
export type DecompressTarget = { kind: 'block'; block: Block } | { kind: 'prune'; prune: Prune };

/** One original. */
export interface OriginalItem {
  seq: number;
  role: Role;
  text: string;
}

/** One page. */
export interface DecompressPage {
  /** Block or prune id. */
  blockId: string;
  /** `block` or `prune`. */
  kind: 'block' | 'prune';
  /** `bN` for blocks, '' for prunes. */
  kernelRef: string;
  /** The exact stored summary bytes (the stub text for a prune). */
  summary: string;
  /** Tier (0 for a prune). */
  tier: number;
  /** Originals in the block. */
  total: number;
  /** Offset of this page (after clamping). */
  offset: number;
  items: OriginalItem[];
  /** Offset of the next page, or null on the last page. */
  nextOffset: number | null;
  /** A note, e.g. for an offset past the end ('' otherwise). */
  note: string;
}

/**
 * Clamp an offset: non-numeric, non-finite or negative → 0; fractions truncated.
 */
export function clampOffset(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0) return 0;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(n));
}

/**
 * Clamp a limit to 1..{@link MAX_DECOMPRESS_LIMIT}; absent or non-numeric → the maximum (the default).
 */
export function clampLimit(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (Number.isNaN(n)) return MAX_DECOMPRESS_LIMIT;
  return Math.max(1, Math.min(MAX_DECOMPRESS_LIMIT, Math.trunc(n)));
}

/**
 * Resolve a ref: `bN` matches a block's kernel ref exactly; anything else is a
 * case-insensitive prefix of a block or prune id.
 * @throws InvalidFieldError `ref` when blank, or `AMBIGUOUS_PREFIX` when it matches two ids
 * @throws NotFoundError `BLOCK_NOT_FOUND` when nothing matches
 */
export function resolveRef(view: SessionView, rawRef: unknown): DecompressTarget {
  if (typeof rawRef !== 'string' || rawRef.trim() === '') throw new InvalidFieldError('ref', 'must be a block ref (bN) or a block id prefix');
  const ref = rawRef.trim();
  if (/^b\d+$/.test(ref)) {
    const block = view.blocks.find((b) => b.kernelRef === ref);
    if (!block) throw new NotFoundError('BLOCK_NOT_FOUND', `no block ${ref}`, { ref });
    return { kind: 'block', block };
  }
  const p = ref.toLowerCase();
  const matches: DecompressTarget[] = [
    ...view.blocks.filter((b) => b.blockId.toLowerCase().startsWith(p)).map((block) => ({ kind: 'block' as const, block })),
    ...view.prunes.filter((x) => x.pruneId.toLowerCase().startsWith(p)).map((prune) => ({ kind: 'prune' as const, prune })),
  ];
  if (matches.length === 0) throw new NotFoundError('BLOCK_NOT_FOUND', `no block matches ${JSON.stringify(ref)}`, { ref });
  if (matches.length > 1) {
    const ids = matches.map((m) => (m.kind === 'block' ? m.block.blockId : m.prune.pruneId));
    throw new InvalidFieldError('ref', `ambiguous prefix ${JSON.stringify(ref)} matches ${ids.join(', ')}`, 'AMBIGUOUS_PREFIX', { candidates: ids.join(',') });
  }
  return matches[0]!;
}

function renderedLength(item: OriginalItem): number {
  return `#${item.seq} ${item.role}: `.length + item.text.length + 1;
}

/** One page of a target's originals. */
export function decompressPage(view: SessionView, target: DecompressTarget, rawOffset: unknown, rawLimit: unknown): DecompressPage {
  const offset = clampOffset(rawOffset);
  const limit = clampLimit(rawLimit);
  const seqs = target.kind === 'block' ? view.blockOriginals(target.block) : target.prune.shadowedSeqs;
  const head =
    target.kind === 'block'
      ? { blockId: target.block.blockId, kind: 'block' as const, kernelRef: target.block.kernelRef, summary: target.block.summary, tier: target.block.tier }
      : { blockId: target.prune.pruneId, kind: 'prune' as const, kernelRef: '', summary: PRUNE_STUB_TEXT, tier: 0 };
  const total = seqs.length;
  if (offset >= total) {
    const note = total === 0 ? 'the block hides no messages' : `offset ${offset} is past the end; valid offsets are 0..${total - 1}`;
    return { ...head, total, offset, items: [], nextOffset: null, note };
  }
  const items: OriginalItem[] = [];
  let chars = 0;
  for (let i = offset; i < total && items.length < limit; i++) {
    const info = view.node(seqs[i]!);
    const item = { seq: info.seq, role: info.role, text: info.text };
    const len = renderedLength(item);
    // The first item always goes in, so paging always moves forward.
    if (items.length > 0 && chars + len > DECOMPRESS_PAGE_CHARS) break;
    items.push(item);
    chars += len;
  }
  const next = offset + items.length;
  return { ...head, total, offset, items, nextOffset: next < total ? next : null, note: '' };
}
