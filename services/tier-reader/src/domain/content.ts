/**
 * ReadContent (content/read, content/abstract, content/overview): one node's tier by URI. A
 * file answers from its own point; a directory answers from its sidecars (`.abstract.md`,
 * `.overview.md`).
 */
import { FrontMatterError, pyStrip, stripDirectoryFrontMatter } from '@ctxmesh/kernel';
import { type NodeContent, type VectorIndex, checkReadAccess, contentVisibility, type CallerScope } from '@ctxmesh/stores';

/** Tiers a content read may ask for. */
export const CONTENT_TIERS = ['read', 'abstract', 'overview'] as const;

/** One of {@link CONTENT_TIERS}. */
export type ContentTier = (typeof CONTENT_TIERS)[number];

/** Nothing (visible to the caller) lives at the URI; the gateway answers 404. */
export class ContentNotFoundError extends Error {
  override readonly name = 'ContentNotFoundError';
  constructor(readonly uri: string) {
    super(`Not found: ${uri}`);
  }
}

/** A content read's answer. */
export interface ContentResult {
  /** The tier text. */
  text: string;
  /** Content hash of the point the text came from ("" for a directory without sidecars). */
  contentHash: string;
  /** True when the URI is a directory. */
  isDirectory: boolean;
}

/** The overview of a directory from its `.overview.md` point: the stored one, else the body without front matter. */
function directoryOverview(ov: NodeContent): string {
  if (ov.overview.trim() !== '') return ov.overview;
  try {
    return stripDirectoryFrontMatter(ov.body);
  } catch (e) {
    // A refused front matter leaves the directory without an overview (as in context mode).
    if (e instanceof FrontMatterError) return '';
    throw e;
  }
}

/**
 * Read one tier of a node.
 *
 * - file: `read` = the stored content as written (a memory keeps its metadata comment),
 *   `abstract` / `overview` = the stored tiers;
 * - directory (a sidecar or any point under it exists): `abstract` = `.abstract.md`,
 *   `overview` = `.overview.md` without front matter, `read` = the `.overview.md` content as
 *   written (else `.abstract.md`'s); a missing sidecar gives "".
 * @param uri validated, alias-resolved node URI
 * @throws AccessDeniedError for another user's space (non-privileged caller)
 * @throws ContentNotFoundError when nothing visible lives at `uri`
 */
export async function readContent(index: VectorIndex, scope: CallerScope, uri: string, tier: ContentTier): Promise<ContentResult> {
  checkReadAccess(scope, uri);
  const vis = contentVisibility(scope);
  const [file, abs, ov] = (await index.get([uri, `${uri}/.abstract.md`, `${uri}/.overview.md`], vis, 'content')) as Array<NodeContent | null>;
  if (file) {
    const text = tier === 'read' ? file.body : tier === 'abstract' ? file.abstract : file.overview;
    return { text, contentHash: file.contentHash, isDirectory: false };
  }
  if (!abs && !ov && !(await index.exists(uri, vis))) throw new ContentNotFoundError(uri);
  if (tier === 'abstract') return { text: abs ? abs.abstract || pyStrip(abs.body) : '', contentHash: abs?.contentHash ?? '', isDirectory: true };
  if (tier === 'overview') return { text: ov ? directoryOverview(ov) : '', contentHash: ov?.contentHash ?? '', isDirectory: true };
  const src = ov ?? abs;
  return { text: src?.body ?? '', contentHash: src?.contentHash ?? '', isDirectory: true };
}
