/**
 * A write as the indexer applies it: the bus's `indexer.WriteOp`, validated and normalised.
 * Anything that cannot become a {@link ValidWrite} is malformed: a final answer, never retried.
 */
import { InvalidArgumentError, InvalidUriError, assertValidInterval, assertWritableUri, contextTypeOf, normalizeTags, ownershipOf, resolveUri } from '@ctxmesh/kernel';
import { indexer } from '@ctxmesh/proto';
import { MalformedWriteError } from './errors';

export { MalformedWriteError };

/** What a write does. */
export type WriteKind = 'replace' | 'append' | 'create' | 'delete';

/** A validated write. */
export interface ValidWrite {
  /** Write id ("" when the caller gave none: then no status is kept). */
  writeId: string;
  kind: WriteKind;
  /** Normalised node URI. */
  uri: string;
  /** Content as written ("" for deletes). */
  content: string;
  /** Tenant account. */
  account: string;
  /** Writer's user id (absent or "" when the op names none): the write receipt's owner. */
  user?: string;
  /** Workspace slug ("default" when none). */
  workspace: string;
  /** End-user subject: the op's, else the owner of a memory URI, else "". */
  subject: string;
  /** Normalised `k=v` tags (the kernel's `normalizeTags`). */
  tags: string[];
  /** Valid-time start, ms since epoch, or null (open). */
  validFrom: number | null;
  /** Valid-time end (exclusive), ms since epoch, or null (open). */
  validTo: number | null;
}

/**
 * Decode a bus payload.
 * @throws MalformedWriteError when the bytes are not a WriteOp
 */
export function decodeWriteOp(data: Uint8Array): indexer.WriteOp {
  try {
    return indexer.WriteOp.decode(data);
  } catch (err) {
    throw new MalformedWriteError('payload', `payload is not a ctxmesh.indexer.v1.WriteOp: ${(err as Error).message}`);
  }
}

function kindOf(mode: indexer.WriteMode): WriteKind {
  switch (mode) {
    case indexer.WriteMode.WRITE_MODE_UNSPECIFIED:
    case indexer.WriteMode.WRITE_MODE_REPLACE:
      return 'replace';
    case indexer.WriteMode.WRITE_MODE_APPEND:
      return 'append';
    case indexer.WriteMode.WRITE_MODE_CREATE:
      return 'create';
    case indexer.WriteMode.WRITE_MODE_DELETE:
      return 'delete';
    default:
      throw new MalformedWriteError('mode', `unknown write mode ${String(mode)}`);
  }
}

/**
 * Validate and normalise a WriteOp. The rules of a write are the kernel's, the ones the
 * gateway answers 400 for (`assertWritableUri`, `normalizeTags`, `assertValidInterval`):
 * - identity with a non-empty `account_id` is required (every point belongs to an account);
 * - the URI must be a valid viking:// URI below a scope root (`viking://resources/x`,
 *   `viking://user/{u}/x`…), without `#` (reserved for passage URIs `doc#p<i>`);
 * - the mode must be known (unset = replace); every tag strict `k=v`; validity bounds (ms,
 *   read from text by the gateway) a non-empty half-open interval, `valid_from < valid_to`.
 * @param fallbackId the transport's message id, used when `write_id` is empty
 * @throws MalformedWriteError
 */
export function validateWrite(op: indexer.WriteOp, fallbackId = ''): ValidWrite {
  const account = op.identity?.accountId ?? '';
  if (account === '') throw new MalformedWriteError('identity', 'identity.account_id is required');
  let uri: string;
  try {
    uri = resolveUri(op.uri, op.identity?.userId || 'default');
    assertWritableUri(uri);
  } catch (err) {
    if (err instanceof InvalidUriError) throw new MalformedWriteError('uri', err.message);
    throw err;
  }
  const kind = kindOf(op.mode);
  const validFrom = op.validFromMs ?? null;
  const validTo = op.validToMs ?? null;
  const tags = rule('tags', () => normalizeTags(op.tags));
  rule('valid_to', () => assertValidInterval(validFrom, validTo));
  const subject = op.subject.trim() || (contextTypeOf(uri) === 'memory' ? ownershipOf(uri).user : '');
  return {
    writeId: op.writeId || fallbackId,
    kind,
    uri,
    content: kind === 'delete' ? '' : op.content,
    account,
    user: op.identity?.userId ?? '',
    workspace: op.identity?.workspace.trim() || 'default',
    subject,
    tags,
    validFrom,
    validTo,
  };
}

/** Run a kernel rule on the op's `field`: its refusal makes the op malformed. */
function rule<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new MalformedWriteError(field, err.message);
    throw err;
  }
}
