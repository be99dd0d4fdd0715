/**
 * What the orchestrator needs from the services it calls. Every method takes a required
 * Budget (a forgotten propagation is a compile error). The mesh implements these with
 * gRPC clients (`../clients`); the in-process benchmark implements them with direct calls.
 */
import type { Budget } from '@ctxmesh/rpc';
import type { budgetRender, gather, ledger, rewrite, sessions, tierReader } from '@ctxmesh/proto';

/** gather service. */
export interface GatherPort {
  find(req: gather.FindRequest, budget: Budget): Promise<gather.FindResponse>;
  gatherCandidates(req: gather.GatherCandidatesRequest, budget: Budget): Promise<gather.GatherCandidatesResponse>;
  gatherPassages(req: gather.GatherPassagesRequest, budget: Budget): Promise<gather.GatherPassagesResponse>;
  expandLinks(req: gather.ExpandLinksRequest, budget: Budget): Promise<gather.ExpandLinksResponse>;
}

/** tier-reader service. */
export interface TierReaderPort {
  readTiers(req: tierReader.ReadTiersRequest, budget: Budget): Promise<tierReader.ReadTiersResponse>;
  readContent(req: tierReader.ReadContentRequest, budget: Budget): Promise<tierReader.ReadContentResponse>;
}

/** budget-render service. */
export interface BudgetRenderPort {
  planRender(req: budgetRender.PlanRenderRequest, budget: Budget): Promise<budgetRender.PlanRenderResponse>;
  countTokens(req: budgetRender.CountTokensRequest, budget: Budget): Promise<budgetRender.CountTokensResponse>;
  trimPassages(req: budgetRender.TrimPassagesRequest, budget: Budget): Promise<budgetRender.TrimPassagesResponse>;
}

/** ledger service. */
export interface LedgerPort {
  beginTurn(req: ledger.BeginTurnRequest, budget: Budget): Promise<ledger.BeginTurnResponse>;
  recordServed(req: ledger.RecordServedRequest, budget: Budget): Promise<ledger.RecordServedResponse>;
}

/** rewrite service. */
export interface RewritePort {
  expandQuery(req: rewrite.ExpandQueryRequest, budget: Budget): Promise<rewrite.ExpandQueryResponse>;
  rewriteDigest(req: rewrite.RewriteDigestRequest, budget: Budget): Promise<rewrite.RewriteDigestResponse>;
  rewriteQuery(req: rewrite.RewriteQueryRequest, budget: Budget): Promise<rewrite.RewriteQueryResponse>;
  rerank(req: rewrite.RerankRequest, budget: Budget): Promise<rewrite.RerankResponse>;
}

/** sessions service (the parts the pipelines use). */
export interface SessionsPort {
  getSearchContext(req: sessions.GetSearchContextRequest, budget: Budget): Promise<sessions.GetSearchContextResponse>;
  resolveWorkspace(req: sessions.ResolveWorkspaceRequest, budget: Budget): Promise<sessions.ResolveWorkspaceResponse>;
}

/** Everything a pipeline may call. */
export interface Ports {
  gather: GatherPort;
  tierReader: TierReaderPort;
  budgetRender: BudgetRenderPort;
  ledger: LedgerPort;
  rewrite: RewritePort;
  sessions: SessionsPort;
}
