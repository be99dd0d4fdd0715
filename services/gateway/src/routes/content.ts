/**
 * Content routes: `POST /api/v1/content/write` and `DELETE /api/v1/fs` publish an
 * `indexer.WriteOp` to the event bus (the indexer applies it; `wait` answers once it is
 * searchable), and `GET /api/v1/content/{read,abstract,overview}` read a node's tier through
 * the orchestrator.
 */
import { randomUUID } from 'node:crypto';
import { indexer } from '@ctxmesh/proto';
import { Code, isCode, type Budget } from '@ctxmesh/rpc';
import { AwaitDoneAbortedError } from '@ctxmesh/stores';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertTargetsAccessible, DomainError, resolveRequestUri, type HeaderBag } from '../domain';
import type { GatewayDeps } from '../http/app';
import { budgetOf, callerOf } from '../http/context';
import { assertDocumentSize, DEFAULT_MAX_DOCUMENT_BYTES } from '../http/limits';
import {
  boolQuery,
  deadLettersJson,
  deleteOp,
  intQuery,
  mayReadReceipt,
  receiptJson,
  INGEST_WRITE_SUBJECT,
  requiredQuery,
  validateWriteBody,
  workspaceOf,
  writableUri,
  writeOp,
  writeOutcome,
  type WriteResultJson,
} from '../mapping/content';
import { protoIdentity, successEnvelope, type Caller } from '../mapping/search';

/** Tiers a content read may ask for, by route. */
const TIERS = ['read', 'abstract', 'overview'] as const;

/** Mount the content routes on an authenticated scope. */
export function contentRoutes(api: FastifyInstance, deps: GatewayDeps): void {
  const now = deps.now ?? Date.now;
  const newWriteId = deps.newWriteId ?? randomUUID;
  const maxDocumentBytes = deps.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;

  /**
   * Publish `op` and, with `wait`, answer from the indexer's done notice. The waiter is
   * subscribed before the publish so a fast indexer cannot answer unseen.
   */
  const publish = async (op: indexer.WriteOp, wait: boolean, budget: Budget, requestId: string): Promise<WriteResultJson> => {
    const waiter = wait ? deps.bus.awaitDone(op.writeId, budget.signal) : null;
    try {
      await deps.bus.publish(
        { subject: deps.ingestSubject ?? INGEST_WRITE_SUBJECT, id: op.writeId, data: indexer.WriteOp.encode(op).finish(), key: op.uri },
        { timeoutMs: budget.natsTimeoutMs() },
      );
    } catch (err) {
      waiter?.cancel();
      waiter?.done.catch(() => undefined);
      budget.throwIfExhausted();
      throw new DomainError('UNAVAILABLE', 'the event bus did not accept the write; nothing was written', {
        reason: 'BUS_UNAVAILABLE',
        domain: 'gateway',
        uri: op.uri,
        request_id: requestId,
      }, { cause: err });
    }
    // The receipt a caller who does not wait can poll (GET /api/v1/content/status): recorded
    // only if absent, so it never hides an outcome the indexer already recorded.
    const identity = op.identity!;
    await deps.bus
      .putReceipt({ id: op.writeId, state: 'queued', uri: op.uri, account: identity.accountId, user: identity.userId, atMs: now() }, { ifAbsent: true })
      .catch((err: unknown) => deps.log.warn({ err, writeId: op.writeId }, 'write receipt not recorded'));
    if (!waiter) return { uri: op.uri, write_id: op.writeId, status: 'queued' };
    let notice;
    try {
      notice = await waiter.done;
    } catch (err) {
      const cause = err instanceof AwaitDoneAbortedError ? err.cause : undefined;
      if (isCode(cause, Code.DEADLINE_EXCEEDED) || (err instanceof AwaitDoneAbortedError && budget.remainingMs() <= 0)) {
        throw new DomainError(
          'DEADLINE_EXCEEDED',
          `write ${op.writeId} is queued but was not applied within the request budget; it will still be applied`,
          { reason: 'WRITE_PENDING', domain: 'gateway', uri: op.uri, write_id: op.writeId, request_id: requestId },
        );
      }
      if (isCode(cause, Code.CANCELLED)) throw cause;
      throw new DomainError('UNAVAILABLE', `stopped waiting for write ${op.writeId}: the event bus closed; the write is queued`, {
        reason: 'BUS_UNAVAILABLE',
        domain: 'gateway',
        uri: op.uri,
        write_id: op.writeId,
        request_id: requestId,
      }, { cause: err });
    }
    const out = writeOutcome(notice, op.uri, requestId);
    if (out instanceof DomainError) throw out;
    return out;
  };

  /** 409 when `uri` already exists (the indexer settles a race: it refuses `create` too). */
  const assertAbsent = async (caller: Caller, uri: string, budget: Budget) => {
    try {
      await deps.orchestrator.readContent({ identity: protoIdentity(caller), uri, tier: 'abstract' }, budget);
    } catch (err) {
      if (isCode(err, Code.NOT_FOUND)) return;
      throw err;
    }
    throw new DomainError('ALREADY_EXISTS', `URI already exists: ${uri}`, { reason: 'ALREADY_EXISTS', domain: 'gateway', uri, request_id: caller.requestId });
  };

  api.post('/api/v1/content/write', async (request) => {
    const caller0 = callerOf(request);
    const p = validateWriteBody(request.body, caller0);
    assertDocumentSize(p.content, maxDocumentBytes);
    const caller: Caller = { ...caller0, workspace: workspaceOf(request.headers as HeaderBag, p.workspace) };
    const budget = budgetOf(request, deps.deadlines);
    if (p.mode === 'create') await assertAbsent(caller, p.uri, budget);
    const result = await publish(writeOp(p, caller, newWriteId(), now()), p.wait, budget, request.id);
    return successEnvelope(result);
  });

  api.delete('/api/v1/fs', async (request) => {
    const caller = callerOf(request);
    const uri = writableUri(requiredQuery(request.query, 'uri'), caller);
    const wait = boolQuery(request.query, 'wait', false);
    const result = await publish(deleteOp(uri, caller, newWriteId(), now()), wait, budgetOf(request, deps.deadlines), request.id);
    return successEnvelope(result);
  });

  api.get('/api/v1/content/status', async (request) => {
    const caller = callerOf(request);
    const id = requiredQuery(request.query, 'write_id');
    const receipt = await deps.bus.getReceipt(id).catch((err: unknown) => {
      throw new DomainError('UNAVAILABLE', 'the event bus did not answer; try again', { reason: 'BUS_UNAVAILABLE', domain: 'gateway', request_id: request.id }, { cause: err });
    });
    // Another account's (or, for an ordinary user, another user's) write is answered as unknown.
    if (receipt === null || !mayReadReceipt(receipt, caller)) {
      throw new DomainError('NOT_FOUND', `unknown write id '${id}' (never accepted here, or older than the bus's retention)`, {
        reason: 'WRITE_NOT_FOUND',
        domain: 'gateway',
        write_id: id,
        request_id: request.id,
      });
    }
    return successEnvelope(receiptJson(receipt));
  });

  api.get('/api/v1/admin/dead-letters', async (request) => {
    const caller = callerOf(request);
    if (caller.role === 'user') {
      throw new DomainError('PERMISSION_DENIED', 'dead letters are for admins of the account', { reason: 'ADMIN_ONLY', domain: 'gateway', request_id: request.id });
    }
    const limit = intQuery(request.query, 'limit', 100, 1, 1000);
    const letters = await deps.bus.deadLetters(limit);
    return successEnvelope({ dead_letters: deadLettersJson(letters, caller) });
  });

  for (const tier of TIERS) {
    api.get(`/api/v1/content/${tier}`, async (request: FastifyRequest) => {
      const caller = callerOf(request);
      const uri = resolveRequestUri(requiredQuery(request.query, 'uri'), caller.userId);
      assertTargetsAccessible([uri], caller);
      const res = await deps.orchestrator.readContent({ identity: protoIdentity(caller), uri, tier }, budgetOf(request, deps.deadlines));
      return { status: 'ok', result: res.text };
    });
  }
}
