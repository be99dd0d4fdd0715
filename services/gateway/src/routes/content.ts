/**
 * Content routes (content-api): `POST /api/v1/content/write` and `DELETE /api/v1/fs` publish an
 * `indexer.WriteOp` on the event bus (the indexer applies it; `wait` answers once it is
 * searchable), `GET /api/v1/content/status` and `/admin/dead-letters` read what the bus kept,
 * and `GET /api/v1/content/{read,abstract,overview}` read a node's tier through the orchestrator.
 */
import { randomUUID } from 'node:crypto';
import type { indexer, orchestrator } from '@ctxmesh/proto';
import { Code, isCode, type Budget, type Port } from '@ctxmesh/rpc';
import type { FastifyInstance } from 'fastify';
import type { IngestPort } from '../clients/ingest';
import type { DeadlineConfig } from '../config';
import {
  assertTargetsAccessible,
  boolQuery,
  DomainError,
  intQuery,
  mayReadReceipt,
  requiredQuery,
  resolveRequestUri,
  validateWriteBody,
  workspaceOf,
  writableUri,
  type Caller,
  type HeaderBag,
} from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { assertDocumentSize, DEFAULT_MAX_DOCUMENT_BYTES } from '../http/limits';
import { deadLettersJson, deleteOp, receiptJson, writeOp, writeOutcome, type WriteResultJson } from '../mapping/content';
import { successEnvelope } from '../mapping/envelope';
import { protoIdentity } from '../mapping/identity';

/** Tiers a content read may ask for, by route. */
const TIERS = ['read', 'abstract', 'overview'] as const;

/** What the content routes need. */
export interface ContentRouteDeps {
  /** Reads of a node's tier (and the existence check of `create`). */
  orchestrator: Pick<Port<orchestrator.OrchestratorServiceClient>, 'readContent'>;
  /** Writes, receipts and dead letters over the event bus. */
  ingest: IngestPort;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
  /** Largest document a write may carry (`content`, UTF-8 bytes). @default 4 MiB */
  maxDocumentBytes?: number;
  /** Clock of `published_at_ms`. @default Date.now */
  now?: () => number;
  /** Write-id factory. @default crypto.randomUUID */
  newWriteId?: () => string;
}

/** Mount the content routes on an authenticated scope. */
export function contentRoutes(api: FastifyInstance, deps: ContentRouteDeps): void {
  const now = deps.now ?? Date.now;
  const newWriteId = deps.newWriteId ?? randomUUID;
  const maxDocumentBytes = deps.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;

  /** Publish `op`; with `wait`, answer from the indexer's done notice. */
  const publish = async (op: indexer.WriteOp, wait: boolean, budget: Budget, requestId: string): Promise<WriteResultJson> => {
    const notice = await deps.ingest.submit(op, wait, budget, requestId);
    if (!notice) return { uri: op.uri, write_id: op.writeId, status: 'queued' };
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
    return successEnvelope(await publish(writeOp(p, caller, newWriteId(), now()), p.wait, budget, request.id));
  });

  api.delete('/api/v1/fs', async (request) => {
    const caller = callerOf(request);
    const uri = writableUri(requiredQuery(request.query, 'uri'), caller);
    const wait = boolQuery(request.query, 'wait', false);
    return successEnvelope(await publish(deleteOp(uri, caller, newWriteId(), now()), wait, budgetOf(request, deps.deadlines), request.id));
  });

  api.get('/api/v1/content/status', async (request) => {
    const caller = callerOf(request);
    const id = requiredQuery(request.query, 'write_id');
    const receipt = await deps.ingest.receipt(id, request.id);
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
    return successEnvelope({ dead_letters: deadLettersJson(await deps.ingest.deadLetters(limit), caller) });
  });

  for (const tier of TIERS) {
    api.get(`/api/v1/content/${tier}`, async (request) => {
      const caller = callerOf(request);
      const uri = resolveRequestUri(requiredQuery(request.query, 'uri'), caller.userId);
      assertTargetsAccessible([uri], caller);
      const res = await deps.orchestrator.readContent({ identity: protoIdentity(caller), uri, tier }, budgetOf(request, deps.deadlines));
      return { status: 'ok', result: res.text };
    });
  }
}
