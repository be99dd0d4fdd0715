/**
 * What the orchestrator needs from the services it calls: each a port derived from the
 * generated client (`Port<C>`: one `(request, budget) => Promise<response>` per RPC), so every
 * method takes a required Budget and a forgotten propagation is a compile error. The mesh
 * implements them with `grpcPort` (`../clients/grpc.ts`); the in-process benchmark with direct
 * calls of the services' handlers.
 */
import type { Port } from '@ctxmesh/rpc';
import type { budgetRender, gather, ledger, rewrite, sessions, tierReader } from '@ctxmesh/proto';

/** gather service: list search, context gathering, retrieve gathering, graph assist. */
export type GatherPort = Port<gather.GatherServiceClient>;

/** tier-reader service: tier bodies and content reads. */
export type TierReaderPort = Port<tierReader.TierReaderServiceClient>;

/** budget-render service: plan/render, token counts, the retrieve trim. */
export type BudgetRenderPort = Port<budgetRender.BudgetRenderServiceClient>;

/** ledger service: the session's turn clock and what it served. */
export type LedgerPort = Port<ledger.LedgerServiceClient>;

/** rewrite service: expansion, digest, query rewrite, rerank. */
export type RewritePort = Port<rewrite.RewriteServiceClient>;

/** sessions service (the parts the pipelines use). */
export type SessionsPort = Pick<Port<sessions.SessionsServiceClient>, 'getSearchContext' | 'resolveWorkspace'>;

/** Everything a pipeline may call. */
export interface Ports {
  gather: GatherPort;
  tierReader: TierReaderPort;
  budgetRender: BudgetRenderPort;
  ledger: LedgerPort;
  rewrite: RewritePort;
  sessions: SessionsPort;
}
