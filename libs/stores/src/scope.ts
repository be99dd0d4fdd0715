import type { Visibility } from './ports/vector-index';

/**
 * URI roots of the default scope of a search with empty `targets`, for both adapters: the
 * caller's user space and the account-wide scopes (`viking://resources`, `viking://agent`).
 * The account is not part of a URI; adapters scope every read by `vis.account` as well.
 */
export function defaultScopeRoots(vis: Visibility): string[] {
  return [`viking://user/${vis.user}`, 'viking://resources', 'viking://agent'];
}
