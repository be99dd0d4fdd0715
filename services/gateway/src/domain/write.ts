/**
 * Writes and deletes (content-api §2–§3), the checks: a `POST /api/v1/content/write` body, the
 * URI a write or delete may address, validity times, and who may read a write's receipt or
 * the dead letters. The rules a write must meet are the kernel's (`assertWritableUri`,
 * `normalizeTags`, `assertValidInterval`): the indexer applies the same ones.
 */
import { assertValidInterval, assertWritableUri } from '@ctxmesh/kernel';
import type { WriteReceipt } from '@ctxmesh/stores';
import { invalidArgument, kernelRule, RequestValidationError } from './errors';
import { normalizeTags, parseTimeBound } from './filter';
import type { Identity } from './headers';
import { bool, fields, list, literal, nullable, str, validateModel } from './schema';
import { assertTargetsAccessible, resolveRequestUri } from './uris';

/** Write modes of the REST body. */
export type WriteModeName = 'replace' | 'append' | 'create';

/** `POST /api/v1/content/write` fields in declaration order (unknown fields are a 400). */
export const WRITE_FIELDS = fields(
  { name: 'uri', type: str, required: true },
  { name: 'content', type: str, required: true },
  { name: 'mode', type: literal('replace', 'append', 'create') },
  { name: 'wait', type: bool },
  { name: 'valid_from', type: nullable(str) },
  { name: 'valid_to', type: nullable(str) },
  { name: 'tags', type: nullable(list(str)) },
  { name: 'workspace', type: nullable(str) },
);

/** A validated write. */
export interface WriteParams {
  /** Node URI, validated and `~`-expanded. */
  uri: string;
  content: string;
  /** @default "replace" */
  mode: WriteModeName;
  /** Answer only once the new version is searchable. @default false */
  wait: boolean;
  /** Valid-time start, ms since the epoch; null = open. */
  validFromMs: number | null;
  /** Valid-time end (exclusive), ms since the epoch; null = open. */
  validToMs: number | null;
  /** Normalised `k=v` tags. */
  tags: string[];
  /** Workspace from the body, or null (then the `X-Workspace` header applies). */
  workspace: string | null;
}

/**
 * A URI a write or delete may address: valid, `~`-expanded, writable by the kernel's rule
 * (`assertWritableUri`: below a scope root, never `viking://`, `viking://resources` or a user
 * root itself, and no `#`) and, for an ordinary user, not in another user's space.
 * @throws DomainError INVALID_URI (naming the URI as the caller wrote it) or PERMISSION_DENIED
 */
export function writableUri(raw: string, identity: Pick<Identity, 'userId' | 'role'>): string {
  const uri = resolveRequestUri(raw, identity.userId);
  kernelRule(() => assertWritableUri(uri, raw.trim()));
  assertTargetsAccessible([uri], identity);
  // Directory sidecars (`D/.abstract.md`, `D/.overview.md`) are written like any file: they
  // are how a directory gets its abstract and overview (context-contract §2.1, §4.4).
  return uri;
}

const RELATIVE = /^\d+[smhdw]$/;

/**
 * `valid_from` / `valid_to`: an ISO-8601 date (start of that day, UTC) or date-time. The one
 * place the mesh reads validity text: the indexer gets the ms.
 * @returns ms since the epoch, or null when absent/blank (open)
 * @throws DomainError INVALID_ARGUMENT
 */
export function parseValidTime(value: string | null | undefined, field: 'valid_from' | 'valid_to'): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const bad = () => invalidArgument(`Invalid ${field} value '${value}': use an ISO-8601 date (YYYY-MM-DD) or timestamp`);
  if (RELATIVE.test(value.trim())) throw bad();
  try {
    // 'since' = start of a date-only day: validity intervals are half-open [from, to).
    return parseTimeBound(value, 'since', 0);
  } catch {
    throw bad();
  }
}

/**
 * Validate a write body.
 * @throws RequestValidationError (400, context-contract §1.7 variant 1) or DomainError
 *   (INVALID_URI, PERMISSION_DENIED, INVALID_ARGUMENT for times and tags)
 */
export function validateWriteBody(body: unknown, identity: Pick<Identity, 'userId' | 'role'>): WriteParams {
  const r = validateModel(body, WRITE_FIELDS);
  if (!r.ok) throw new RequestValidationError(r.issues);
  const v = r.model.values;
  const uri = writableUri(v.uri, identity);
  const validFromMs = parseValidTime(v.valid_from, 'valid_from');
  const validToMs = parseValidTime(v.valid_to, 'valid_to');
  // Half-open [from, to): equal bounds are an empty interval, refused like reversed ones.
  kernelRule(() => assertValidInterval(validFromMs, validToMs));
  return {
    uri,
    content: v.content,
    mode: v.mode ?? 'replace',
    wait: v.wait ?? false,
    validFromMs,
    validToMs,
    tags: normalizeTags(v.tags),
    workspace: v.workspace ?? null,
  };
}

/** Who may read a write receipt: its account, and in it the writer or an admin/root. */
export function mayReadReceipt(r: Pick<WriteReceipt, 'account' | 'user'>, caller: Pick<Identity, 'accountId' | 'userId' | 'role'>): boolean {
  return r.account === caller.accountId && (caller.role !== 'user' || r.user === caller.userId);
}

/** Who may see a dead letter: root every one, an admin their own account's (an ordinary user none: the route refuses). */
export function mayReadDeadLetter(account: string, caller: Pick<Identity, 'accountId' | 'role'>): boolean {
  return caller.role === 'root' || account === caller.accountId;
}
