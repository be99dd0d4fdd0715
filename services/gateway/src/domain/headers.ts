/**
 * Request headers (context-contract §1.1): authentication, identity, the actor peer, the
 * request id and the workspace.
 */
import { randomUUID } from 'node:crypto';
import { WORKSPACE_SLUG, type CallerRole } from '@ctxmesh/kernel';
import { invalidArgument, unauthenticated } from './errors';

/** Node-style headers: lower- or mixed-case names, a value or a list of values. */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Who is calling. Built here only; never taken from a client's URIs. */
export interface Identity {
  /** Tenant account. */
  accountId: string;
  /** User; the user root is `viking://user/{userId}`. */
  userId: string;
  /** Role inside the account (`root` in dev mode). */
  role: CallerRole;
  /** `X-OpenViking-Actor-Peer`, or null. */
  actorPeerId: string | null;
  /** Echoed `X-Request-ID`, or a fresh UUID4. */
  requestId: string;
}

/** The caller as the mesh sees it: who, and in which workspace. */
export interface Caller extends Identity {
  /** Workspace slug ("" = the default workspace). */
  workspace: string;
}

/** What an API key stands for. */
export interface ApiKeyIdentity {
  accountId: string;
  userId: string;
  /** @default "user" */
  role?: CallerRole;
}

/**
 * How callers authenticate.
 * - `dev`: no key; identity from `X-OpenViking-Account`/`-User` (default `default`/`default`), role root;
 * - `api_key`: a key from `X-API-Key` or `Authorization: Bearer` maps to the identity; identity headers are ignored;
 * - `trusted`: behind an authenticating proxy; `X-OpenViking-Account` and `-User` are required,
 *   `X-OpenViking-Role` is optional (default `user`).
 */
export type AuthConfig =
  | { mode: 'dev' }
  | { mode: 'api_key'; keys: ReadonlyMap<string, ApiKeyIdentity> | Readonly<Record<string, ApiKeyIdentity>> }
  | { mode: 'trusted' };

/** Header names, lower-cased. */
export const HEADERS = Object.freeze({
  apiKey: 'x-api-key',
  authorization: 'authorization',
  account: 'x-openviking-account',
  user: 'x-openviking-user',
  role: 'x-openviking-role',
  actorPeer: 'x-openviking-actor-peer',
  requestId: 'x-request-id',
});

/** Every value sent for header `name` (case-insensitive), in order. */
export function headerValues(headers: HeaderBag, name: string): string[] {
  const want = name.toLowerCase();
  const out: string[] = [];
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== want || v === undefined) continue;
    if (typeof v === 'string') out.push(v);
    else out.push(...v);
  }
  return out;
}

/** First value of a header, trimmed; blank counts as absent (null). */
export function headerValue(headers: HeaderBag, name: string): string | null {
  const v = headerValues(headers, name)[0];
  if (v === undefined) return null;
  const t = v.trim();
  return t === '' ? null : t;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `X-Request-ID` to echo: the sent value when exactly one value matching
 * `[A-Za-z0-9._:-]{1,128}` was sent, else a fresh UUID4. (Node joins repeated headers with
 * `", "`, which never matches, so repeats also get a fresh id.)
 * @param newId id factory @default crypto.randomUUID
 */
export function requestIdFrom(headers: HeaderBag, newId: () => string = randomUUID): string {
  const values = headerValues(headers, HEADERS.requestId);
  if (values.length === 1 && REQUEST_ID.test(values[0])) return values[0];
  return newId();
}

const PEER_CHARS = /^[a-zA-Z0-9_.@-]+$/;

/** Exact message for a rejected `X-OpenViking-Actor-Peer`. */
export function actorPeerMessage(value: string): string {
  return `Invalid X-OpenViking-Actor-Peer header '${value}': a peer id uses only letters, digits, '_', '.', '@' and '-', has at most one '@', and is not '.' or '..'`;
}

/**
 * `X-OpenViking-Actor-Peer`: trimmed, blank = absent. Rejected if it contains `/` or `\`, is
 * `.`/`..`, has more than one `@`, or does not match `^[a-zA-Z0-9_.@-]+$`.
 * @returns the peer id or null
 * @throws DomainError INVALID_ARGUMENT
 */
export function actorPeerFrom(headers: HeaderBag): string | null {
  const v = headerValue(headers, HEADERS.actorPeer);
  if (v === null) return null;
  if (!isSafeId(v)) throw invalidArgument(actorPeerMessage(v));
  return v;
}

/** The actor-peer rules, also applied to user and account ids that end up in URIs. */
function isSafeId(v: string): boolean {
  if (v.includes('/') || v.includes('\\')) return false;
  if (v === '.' || v === '..') return false;
  if (v.split('@').length > 2) return false;
  return PEER_CHARS.test(v);
}

/** The bearer token of `Authorization: Bearer <key>`, or null. */
function bearer(headers: HeaderBag): string | null {
  const v = headerValue(headers, HEADERS.authorization);
  if (v === null) return null;
  const m = /^bearer\s+(.+)$/i.exec(v);
  const key = m ? m[1].trim() : '';
  return key === '' ? null : key;
}

/** The API key: `X-API-Key` wins over `Authorization: Bearer`; null when neither is sent. */
export function apiKeyFrom(headers: HeaderBag): string | null {
  return headerValue(headers, HEADERS.apiKey) ?? bearer(headers);
}

function lookupKey(keys: ReadonlyMap<string, ApiKeyIdentity> | Readonly<Record<string, ApiKeyIdentity>>, key: string): ApiKeyIdentity | undefined {
  if (keys instanceof Map) return keys.get(key);
  // Own properties only: "constructor" or "__proto__" must not authenticate anyone.
  const table = keys as Readonly<Record<string, ApiKeyIdentity>>;
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

const ROLES: readonly CallerRole[] = ['root', 'admin', 'user'];

function checkedId(value: string, header: string): string {
  if (!isSafeId(value)) throw invalidArgument(`Invalid ${header} header '${value}': use only letters, digits, '_', '.', '@' and '-'`);
  return value;
}

/**
 * Resolve the caller. Order: authentication (401) first, then the actor peer (400).
 * Call {@link requestIdFrom} separately when an error response needs the request id.
 * @param newId request-id factory @default crypto.randomUUID
 * @throws DomainError UNAUTHENTICATED (missing/unknown key, or trusted mode without identity
 *   headers) or INVALID_ARGUMENT (bad actor peer, role or id header)
 */
export function resolveIdentity(headers: HeaderBag, auth: AuthConfig, newId: () => string = randomUUID): Identity {
  let accountId: string;
  let userId: string;
  let role: CallerRole;
  if (auth.mode === 'api_key') {
    const key = apiKeyFrom(headers);
    if (key === null) throw unauthenticated('Missing API key: send X-API-Key or Authorization: Bearer <key>');
    const who = lookupKey(auth.keys, key);
    if (!who) throw unauthenticated('Invalid API key');
    ({ accountId, userId } = who);
    role = who.role ?? 'user';
  } else if (auth.mode === 'trusted') {
    const account = headerValue(headers, HEADERS.account);
    const user = headerValue(headers, HEADERS.user);
    if (account === null || user === null) {
      throw unauthenticated('Trusted auth requires the X-OpenViking-Account and X-OpenViking-User headers');
    }
    accountId = checkedId(account, 'X-OpenViking-Account');
    userId = checkedId(user, 'X-OpenViking-User');
    const r = headerValue(headers, HEADERS.role);
    if (r === null) role = 'user';
    else if ((ROLES as readonly string[]).includes(r.toLowerCase())) role = r.toLowerCase() as CallerRole;
    else throw invalidArgument(`Invalid X-OpenViking-Role header '${r}': expected one of root, admin, user`);
  } else {
    accountId = checkedId(headerValue(headers, HEADERS.account) ?? 'default', 'X-OpenViking-Account');
    userId = checkedId(headerValue(headers, HEADERS.user) ?? 'default', 'X-OpenViking-User');
    role = 'root';
  }
  const actorPeerId = actorPeerFrom(headers);
  return { accountId, userId, role, actorPeerId, requestId: requestIdFrom(headers, newId) };
}

/**
 * The workspace of a request: the body's `workspace` (writes), else the `X-Workspace` header,
 * else "" (the caller's default workspace, resolved downstream).
 * @throws DomainError INVALID_ARGUMENT for a value that is not a slug (`[A-Za-z0-9][A-Za-z0-9._-]{0,63}`)
 */
export function workspaceOf(headers: HeaderBag, fromBody: string | null = null): string {
  const raw = fromBody !== null && fromBody.trim() !== '' ? fromBody.trim() : headerValue(headers, 'x-workspace');
  if (raw === null) return '';
  if (!WORKSPACE_SLUG.test(raw)) throw invalidArgument(`Invalid workspace '${raw}': use letters, digits, '.', '_' and '-' (at most 64 characters)`);
  return raw;
}
