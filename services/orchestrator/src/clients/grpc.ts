/**
 * gRPC implementations of the orchestrator's ports. Each call carries the caller's Budget
 * (deadline + parent) and translates downstream codes deliberately: INVALID_ARGUMENT passes
 * only from gather (it validates the caller's query/image; retrieve's subject is PERMISSION_DENIED) and tier-reader/sessions
 * NOT_FOUND/PERMISSION_DENIED pass for content reads and workspaces.
 */
import { budgetRender, gather, ledger, rewrite, sessions, tierReader } from '@ctxmesh/proto';
import { callUnary, Code, connect } from '@ctxmesh/rpc';
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

/** Ports over gRPC plus a close hook. */
export function grpcPorts(addrs: DownstreamAddrs): Ports & { close(): void } {
  const g = connect(gather.GatherServiceClient, addrs.gather);
  const t = connect(tierReader.TierReaderServiceClient, addrs.tierReader);
  const br = connect(budgetRender.BudgetRenderServiceClient, addrs.budgetRender);
  const l = connect(ledger.LedgerServiceClient, addrs.ledger);
  const rw = connect(rewrite.RewriteServiceClient, addrs.rewrite);
  const se = connect(sessions.SessionsServiceClient, addrs.sessions);
  return {
    gather: {
      find: (req, b) => callUnary(g.find.bind(g), req, b, { domain: 'gather', pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED]}),
      gatherCandidates: (req, b) => callUnary(g.gatherCandidates.bind(g), req, b, { domain: 'gather', pass: [Code.INVALID_ARGUMENT]}),
      gatherPassages: (req, b) => callUnary(g.gatherPassages.bind(g), req, b, { domain: 'gather', pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED]}),
      expandLinks: (req, b) => callUnary(g.expandLinks.bind(g), req, b, { domain: 'gather'}),
    },
    tierReader: {
      readTiers: (req, b) => callUnary(t.readTiers.bind(t), req, b, { domain: 'tier-reader'}),
      readContent: (req, b) =>
        callUnary(t.readContent.bind(t), req, b, { domain: 'tier-reader', pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT]}),
    },
    budgetRender: {
      planRender: (req, b) => callUnary(br.planRender.bind(br), req, b, { domain: 'budget-render', pass: [Code.INVALID_ARGUMENT]}),
      countTokens: (req, b) => callUnary(br.countTokens.bind(br), req, b, { domain: 'budget-render', pass: [Code.INVALID_ARGUMENT]}),
      trimPassages: (req, b) => callUnary(br.trimPassages.bind(br), req, b, { domain: 'budget-render'}),
    },
    ledger: {
      beginTurn: (req, b) => callUnary(l.beginTurn.bind(l), req, b, { domain: 'ledger', retry: false}),
      recordServed: (req, b) => callUnary(l.recordServed.bind(l), req, b, { domain: 'ledger'}),
    },
    rewrite: {
      expandQuery: (req, b) => callUnary(rw.expandQuery.bind(rw), req, b, { domain: 'rewrite'}),
      rewriteDigest: (req, b) => callUnary(rw.rewriteDigest.bind(rw), req, b, { domain: 'rewrite'}),
      rewriteQuery: (req, b) => callUnary(rw.rewriteQuery.bind(rw), req, b, { domain: 'rewrite'}),
      rerank: (req, b) => callUnary(rw.rerank.bind(rw), req, b, { domain: 'rewrite'}),
    },
    sessions: {
      getSearchContext: (req, b) => callUnary(se.getSearchContext.bind(se), req, b, { domain: 'sessions'}),
      resolveWorkspace: (req, b) =>
        callUnary(se.resolveWorkspace.bind(se), req, b, { domain: 'sessions', pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT]}),
    },
    close() {
      for (const c of [g, t, br, l, rw, se]) c.close();
    },
  };
}
