/**
 * URI inputs at the request boundary (context-contract §1.2, §1.7, §3.7, §7): `target_uri`,
 * `exclude_uris` and `image_url`, validated and `~`-expanded for the caller.
 */
import { InvalidUriError, isUnder, resolveUri, SCHEME } from '@ctxmesh/kernel';
import { invalidArgument, invalidUri, permissionDenied } from './errors';
import type { Identity } from './headers';

/** At most this many `exclude_uris` are used (more is a validation error on HTTP). */
export const MAX_EXCLUDE_URIS = 200;

/** Exact message for an `image_url` with an unsupported scheme. */
export const IMAGE_URL_MESSAGE = 'image_url must be a data:image base64 URI, http(s) URL, or viking:// URI.';

/** `resolveUri`, with `InvalidUriError` turned into the 400 `INVALID_URI` domain error. */
export function resolveRequestUri(raw: string, userId: string): string {
  try {
    return resolveUri(raw, userId);
  } catch (e) {
    if (e instanceof InvalidUriError) throw invalidUri(e.uri, e.reason);
    throw e;
  }
}

/**
 * List-mode `target_uri` (string or list): each non-blank value validated and `~`-expanded.
 * Blank values mean "no target" and are skipped.
 * @returns target URIs in request order; empty = the identity's default scope
 * @throws DomainError INVALID_URI for a malformed URI
 */
export function resolveTargetUris(target: string | readonly string[] | null | undefined, userId: string): string[] {
  if (target === null || target === undefined) return [];
  const raw = typeof target === 'string' ? [target] : target;
  return raw.filter((t) => t.trim() !== '').map((t) => resolveRequestUri(t, userId));
}

/**
 * List-mode access check on explicit targets: an ordinary user may not target another
 * user's space (`viking://user/{other}/…`); root and admin may (the account is enforced on
 * the server anyway).
 * @throws DomainError PERMISSION_DENIED ("Access denied …")
 */
export function assertTargetsAccessible(targets: readonly string[], identity: Pick<Identity, 'userId' | 'role'>): void {
  if (identity.role !== 'user') return;
  for (const t of targets) {
    if (isUnder(t, `${SCHEME}user`) && t !== `${SCHEME}user` && !isUnder(t, `${SCHEME}user/${identity.userId}`)) {
      throw permissionDenied(`Access denied for ${t}`);
    }
  }
}

/**
 * `exclude_uris` (§7): the first 200, each trimmed, empties dropped, validated as viking URIs
 * and `~`-expanded; duplicates collapse (it is a set).
 * @throws DomainError INVALID_URI for a malformed item
 */
export function normalizeExcludeUris(uris: readonly string[] | null | undefined, userId: string): string[] {
  const out: string[] = [];
  for (const raw of (uris ?? []).slice(0, MAX_EXCLUDE_URIS)) {
    const t = raw.trim();
    if (t === '') continue;
    const u = resolveRequestUri(t, userId);
    if (!out.includes(u)) out.push(u);
  }
  return out;
}

/**
 * `image_url` (§1.7, §3.7): absent/`""` → null; `viking://…` → validated and `~`-expanded;
 * `data:image…` and `http(s)://…` pass through verbatim.
 * @throws DomainError INVALID_URI (bad viking URI) or INVALID_ARGUMENT ({@link IMAGE_URL_MESSAGE})
 */
export function resolveImageUrl(imageUrl: string | null | undefined, userId: string): string | null {
  if (imageUrl === null || imageUrl === undefined || imageUrl === '') return null;
  if (imageUrl.trim().startsWith(SCHEME)) return resolveRequestUri(imageUrl, userId);
  if (imageUrl.startsWith('data:image') || imageUrl.startsWith('http://') || imageUrl.startsWith('https://')) return imageUrl;
  throw invalidArgument(IMAGE_URL_MESSAGE);
}
