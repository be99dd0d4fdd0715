/**
 * The orchestrator's ports over gRPC (`grpcPort` per downstream). Each call carries the
 * caller's Budget (deadline + parent) and translates downstream codes deliberately:
 * INVALID_ARGUMENT passes only where the orchestrator forwards the caller's own input (gather
 * validates the query/image; budget-render the tokenizer; tier-reader a content read), NOT_FOUND
 * and PERMISSION_DENIED where they describe the caller's target (content reads, workspaces,
 * retrieve's subject). Everything else becomes INTERNAL (STYLE B6).
 */
import { budgetRender, gather, ledger, rewrite, sessions, tierReader } from '@ctxmesh/proto';
import { Code, grpcPort } from '@ctxmesh/rpc';
import type { Ports } from '../domain/ports';

/** Downstream addresses (`<SVC>_ADDR`). */
export interface DownstreamAddrs {
  gather: string;
  tierReader: string;
  budgetRender: string;
  ledger: string;
  rewrite: string;
  sessions: string;
}

/** Ports over gRPC plus a close hook for their channels. */
export function grpcPorts(addrs: DownstreamAddrs): Ports & { close(): void } {
  const ports = {
    gather: grpcPort(gather.GatherServiceClient, addrs.gather, {
      domain: 'gather',
      methods: {
        find: { pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] },
        gatherCandidates: { pass: [Code.INVALID_ARGUMENT] },
        gatherPassages: { pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] },
      },
    }),
    tierReader: grpcPort(tierReader.TierReaderServiceClient, addrs.tierReader, {
      domain: 'tier-reader',
      methods: { readContent: { pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] } },
    }),
    budgetRender: grpcPort(budgetRender.BudgetRenderServiceClient, addrs.budgetRender, {
      domain: 'budget-render',
      methods: { planRender: { pass: [Code.INVALID_ARGUMENT] }, countTokens: { pass: [Code.INVALID_ARGUMENT] } },
    }),
    // A turn must not advance twice: BeginTurn is never retried.
    ledger: grpcPort(ledger.LedgerServiceClient, addrs.ledger, { domain: 'ledger', methods: { beginTurn: { retry: false } } }),
    rewrite: grpcPort(rewrite.RewriteServiceClient, addrs.rewrite, { domain: 'rewrite' }),
    sessions: grpcPort(sessions.SessionsServiceClient, addrs.sessions, {
      domain: 'sessions',
      methods: { resolveWorkspace: { pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] } },
    }),
  };
  return {
    ...ports,
    close() {
      for (const p of Object.values(ports)) p.close();
    },
  };
}
