/**
 * The rules a write must meet (content-api §2), in one place: the gateway checks them on the
 * caller's request (a 400 naming the problem) and the indexer checks them again on the op it
 * consumes (a malformed op, refused), so a write the gateway accepts is one the indexer applies
 * and an op that reaches the bus some other way meets the same rules.
 */
import { InvalidArgumentError, InvalidUriError } from './errors';
import { SCHEME } from './uri';

/** Why a scope root (or a user root) is refused: it is a namespace, not a node. */
export const SCOPE_ROOT_REASON = 'a write must address a node below a scope root';

/** Why a URI with `#` is refused: `doc#p<i>` names a passage, which only the indexer writes. */
export const PASSAGE_URI_REASON = "'#' is reserved for passage URIs";

/** The message of an empty or reversed validity interval. */
export const VALIDITY_INTERVAL_MESSAGE = 'valid_from must be earlier than valid_to';

/**
 * A resolved URI a write or delete may address: below a scope root (`viking://resources/x`,
 * `viking://agent/x`, `viking://user/{user}/x`; never `viking://`, a scope root or a user root
 * itself) and without `#`. Who may write there is the caller's business (access rules).
 * @param uri a URI already validated and `~`-expanded (`resolveUri`)
 * @param shown the URI the error names (the gateway names the caller's text) @default uri
 * @throws InvalidUriError naming {@link SCOPE_ROOT_REASON} or {@link PASSAGE_URI_REASON}
 */
export function assertWritableUri(uri: string, shown: string = uri): void {
  const segs = uri === SCHEME ? [] : uri.slice(SCHEME.length).split('/');
  const minDepth = segs[0] === 'user' ? 3 : 2;
  if (segs.length < minDepth) throw new InvalidUriError(shown, SCOPE_ROOT_REASON);
  if (uri.includes('#')) throw new InvalidUriError(shown, PASSAGE_URI_REASON);
}

/**
 * Tags as the index stores them and filters match them (context-contract §1.8): each trimmed
 * and lower-cased, exactly one `=`, key and value trimmed and non-empty. A repeated key keeps
 * its first position and takes the later value (`["Env=Prod"," env=prod ","team=Search"]` →
 * `["env=prod","team=search"]`).
 * @throws InvalidArgumentError naming the first tag that is not strict `k=v`
 */
export function normalizeTags(tags: readonly string[] | null | undefined): string[] {
  const byKey = new Map<string, string>();
  for (const raw of tags ?? []) {
    const parts = raw.trim().toLowerCase().split('=');
    const k = parts[0]?.trim() ?? '';
    const v = parts[1]?.trim() ?? '';
    if (parts.length !== 2 || k === '' || v === '') {
      throw new InvalidArgumentError(`Invalid tag '${raw}': tags must be key=value with exactly one '=' and a non-empty key and value`);
    }
    byKey.set(k, v);
  }
  return [...byKey].map(([k, v]) => `${k}=${v}`);
}

/**
 * A validity interval is half-open, `[validFrom, validTo)`: with both bounds set, `validFrom`
 * must be earlier than `validTo`. Equal bounds would be an interval no instant lies in, so a
 * node valid at no time at all: refused like a reversed one. An open bound (null) always passes.
 * @param validFromMs start, ms since the epoch, or null (open)
 * @param validToMs end (exclusive), ms since the epoch, or null (open)
 * @throws InvalidArgumentError {@link VALIDITY_INTERVAL_MESSAGE}
 */
export function assertValidInterval(validFromMs: number | null, validToMs: number | null): void {
  if (validFromMs !== null && validToMs !== null && validFromMs >= validToMs) throw new InvalidArgumentError(VALIDITY_INTERVAL_MESSAGE);
}
