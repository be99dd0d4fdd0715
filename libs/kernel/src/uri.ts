/**
 * viking:// URIs (context-contract §2): validation, the `~` alias, ownership, origins,
 * sidecars and the category a URI implies.
 */
import { InvalidUriError } from './errors';

/** The scheme prefix of every node URI. */
export const SCHEME = 'viking://';

/** Public scopes plus the legacy `session` scope. */
export const SCOPES = ['resources', 'user', 'agent', 'session'] as const;

/** Memory types that have their own quota bucket. */
export const MEMORY_BUCKETS = ['events', 'entities', 'preferences', 'experiences'] as const;

/** Quota keys, in contract order. */
export const QUOTA_KEYS = ['events', 'entities', 'preferences', 'experiences', 'resources', 'skills'] as const;

/** Every reported category (quota keys plus the `memories` catch-all). */
export const CATEGORIES = [...QUOTA_KEYS, 'memories'] as const;

export type Category = (typeof CATEGORIES)[number];
export type ContextType = 'memory' | 'resource' | 'skill';
export type Origin = 'actor_peer' | 'self' | 'other_peer';

/** Names right under `viking://user/` that belong to the removed uid-less shorthand. */
const UIDLESS = new Set(['memories', 'resources', 'skills', 'peers', 'sessions', 'profile.md', 'identity.md', 'soul.md']);


/** Trim and drop trailing slashes (the bare `viking://` root keeps its slashes). */
export function normalizeUri(uri: string): string {
  let u = uri.trim();
  while (u.length > SCHEME.length && u.endsWith('/')) u = u.slice(0, -1);
  return u;
}

/** `viking://user/{userId}`. */
export function userRoot(userId: string): string {
  return `${SCHEME}user/${userId}`;
}

/** `viking://user/{userId}/peers`. */
export function peersRoot(userId: string): string {
  return `${userRoot(userId)}/peers`;
}

/** True when `uri` equals `prefix` or lies under it. */
export function isUnder(uri: string, prefix: string): boolean {
  if (prefix === SCHEME) return uri.startsWith(SCHEME);
  return uri === prefix || uri.startsWith(prefix + '/');
}

/**
 * Expand the `~` alias: `viking://~` → `viking://user/{userId}`, `viking://~/x` →
 * `viking://user/{userId}/x`. Other URIs are returned unchanged.
 */
export function expandAlias(uri: string, userId: string): string {
  if (uri === `${SCHEME}~`) return userRoot(userId);
  if (uri.startsWith(`${SCHEME}~/`)) return userRoot(userId) + uri.slice(SCHEME.length + 1);
  return uri;
}

/**
 * Validate a client-supplied viking URI and resolve its alias.
 * @returns the normalised, alias-expanded URI
 * @throws InvalidUriError with the reason the contract reports
 */
export function resolveUri(raw: string, userId: string): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new InvalidUriError(String(raw ?? ''), 'empty URI');
  const trimmed = raw.trim();
  if (!trimmed.startsWith(SCHEME)) throw new InvalidUriError(trimmed, 'URI must start with viking://');
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new InvalidUriError(trimmed, 'URI contains a control character');
  const uri = expandAlias(normalizeUri(trimmed), userId);
  const path = uri.slice(SCHEME.length);
  if (path === '') return SCHEME;
  const segments = path.split('/');
  const scope = segments[0];
  if (!(SCOPES as readonly string[]).includes(scope)) {
    throw new InvalidUriError(trimmed, `unknown scope '${scope}'; expected one of ${SCOPES.join(', ')}`);
  }
  for (const seg of segments.slice(1)) {
    if (seg === '') throw new InvalidUriError(trimmed, 'empty path segment');
    if (seg === '.' || seg === '..') throw new InvalidUriError(trimmed, 'relative path segment');
  }
  if (scope === 'user' && segments.length > 1 && UIDLESS.has(segments[1])) {
    throw new InvalidUriError(
      trimmed,
      'the uid-less form viking://user/<path> was removed; use viking://user/{user_id}/<path> or viking://~/<path>',
    );
  }
  return uri;
}

/** Parsed ownership facts of a node URI. */
export interface UriOwnership {
  /** First path segment after the scheme. */
  scope: string;
  /** Owning user (`viking://user/{user}/…`), "" for account-wide scopes. */
  user: string;
  /** Peer id (`{user_root}/peers/{peer}/…`), "" when not under a peer. */
  peer: string;
}

/** Who owns a URI. */
export function ownershipOf(uri: string): UriOwnership {
  const segs = uri.startsWith(SCHEME) ? uri.slice(SCHEME.length).split('/') : [];
  const scope = segs[0] ?? '';
  if (scope !== 'user' || segs.length < 2) return { scope, user: '', peer: '' };
  const user = segs[1];
  const peer = segs[2] === 'peers' && segs.length > 3 ? segs[3] : '';
  return { scope, user, peer };
}

/** Node URI of a hit: directory sidecars (`D/.abstract.md`, `D/.overview.md`) map to `D`. */
export function stripSidecar(rawUri: string): { nodeUri: string; isDirectory: boolean } {
  let u = rawUri;
  while (u.length > SCHEME.length && u.endsWith('/')) u = u.slice(0, -1);
  for (const side of ['/.abstract.md', '/.overview.md']) {
    if (u.endsWith(side)) return { nodeUri: u.slice(0, -side.length), isDirectory: true };
  }
  return { nodeUri: u, isDirectory: false };
}

/** True for any `…/profile.md` node (dropped from context assembly, §2.3). */
export function isProfile(nodeUri: string): boolean {
  return nodeUri.endsWith('/profile.md');
}

/** Origin of a node URI relative to the caller (§2.4). */
export function originOf(nodeUri: string, userId: string, actorPeer: string | null | undefined): Origin {
  const root = peersRoot(userId);
  if (!isUnder(nodeUri, root)) return 'self';
  const rest = nodeUri.slice(root.length + 1);
  const peer = rest === '' ? '' : rest.split('/')[0];
  return actorPeer && peer === actorPeer ? 'actor_peer' : 'other_peer';
}

/** Rank of an origin for the sort tie-break: actor_peer > self > other_peer. */
export function originRank(origin: string): number {
  return origin === 'actor_peer' ? 2 : origin === 'self' ? 1 : 0;
}

/**
 * Category of a memory-list hit by URI (§2.3 step 2): the segment after the first
 * `/memories/` when it is a bucket type, else the declared category, else the
 * skills/resources heuristics, else `memories`.
 */
export function categoryFromUri(uri: string, declared?: string | null): Category {
  const i = uri.indexOf('/memories/');
  if (i >= 0) {
    const seg = uri.slice(i + '/memories/'.length).split('/')[0];
    return (MEMORY_BUCKETS as readonly string[]).includes(seg) ? (seg as Category) : 'memories';
  }
  if (declared && (CATEGORIES as readonly string[]).includes(declared)) return declared as Category;
  if (uri.includes('/skills/')) return 'skills';
  if (uri.includes('/resources/') || uri.startsWith(`${SCHEME}resources`)) return 'resources';
  return 'memories';
}

/** Context type a URI implies when it is indexed. */
export function contextTypeOf(uri: string): ContextType {
  const { nodeUri } = stripSidecar(uri);
  const path = nodeUri.slice(SCHEME.length);
  const segs = path.split('/');
  if (segs[0] === 'resources') return 'resource';
  if (segs[0] === 'agent') {
    if (segs[1] === 'skills') return 'skill';
    if (segs[1] === 'memories') return 'memory';
    return 'resource';
  }
  if (segs[0] === 'user') {
    // viking://user/{u}/peers/{p}/<kind>/… behaves like viking://user/{u}/<kind>/…
    const kind = segs[2] === 'peers' ? segs[4] : segs[2];
    if (kind === 'memories') return 'memory';
    if (kind === 'skills') return 'skill';
    if (kind === 'resources') return 'resource';
    if (kind === 'profile.md' || kind === 'identity.md' || kind === 'soul.md') return 'memory';
    return 'resource';
  }
  return 'resource';
}

/** Category a URI implies when it is indexed (the declared category stored with the node). */
export function categoryOfUri(uri: string): Category {
  const type = contextTypeOf(uri);
  if (type === 'skill') return 'skills';
  if (type === 'resource') return 'resources';
  return categoryFromUri(stripSidecar(uri).nodeUri);
}
