/**
 * Typed wrapper of the orchestrator's gRPC client. Every method takes the request's Budget
 * (deadline + cancel on client disconnect) and translates downstream codes deliberately
 * (STYLE B6): only the codes this gateway can explain to its caller pass through.
 */
import { orchestrator } from '@ctxmesh/proto';
import { Budget, callUnary, Code, connect } from '@ctxmesh/rpc';

const DOMAIN = 'orchestrator';

/** What the routes need from the orchestrator. */
export interface OrchestratorClient {
  /**
   * List-mode search. INVALID_ARGUMENT (the gateway validated the query, target and filter it
   * sends) and PERMISSION_DENIED pass through.
   */
  search(req: orchestrator.SearchRequest, budget: Budget): Promise<orchestrator.SearchResponse>;
  /**
   * Context assembly. INVALID_ARGUMENT passes through (gathering's empty-query and image
   * rejections are the caller's input). Retried on UNAVAILABLE only without a session: a
   * request naming a session advances its turn clock and must not run twice.
   */
  assembleContext(req: orchestrator.AssembleContextRequest, budget: Budget): Promise<orchestrator.AssembleContextResponse>;
  /** One node's tier text. NOT_FOUND, PERMISSION_DENIED and INVALID_ARGUMENT pass through. */
  readContent(req: orchestrator.ReadContentRequest, budget: Budget): Promise<orchestrator.ReadContentResponse>;
  /**
   * One-round-trip retrieve. NOT_FOUND / PERMISSION_DENIED (workspace, subject) and
   * INVALID_ARGUMENT (the validated query and as_of) pass through.
   */
  retrieve(req: orchestrator.RetrieveRequest, budget: Budget): Promise<orchestrator.RetrieveResponse>;
  /** A retrieval trace. NOT_FOUND and INVALID_ARGUMENT (the id from the path) pass through. */
  getTrace(req: orchestrator.GetTraceRequest, budget: Budget): Promise<orchestrator.GetTraceResponse>;
  /** Close the channel. */
  close(): void;
}

/** Connect to the orchestrator at `host:port`. */
export function orchestratorClient(address: string): OrchestratorClient {
  const c = connect(orchestrator.OrchestratorServiceClient, address);
  return {
    search: (req, budget) =>
      callUnary(c.search.bind(c), req, budget, { domain: DOMAIN, pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED], requestId: req.identity?.requestId }),
    assembleContext: (req, budget) =>
      callUnary(c.assembleContext.bind(c), req, budget, {
        domain: DOMAIN,
        pass: [Code.INVALID_ARGUMENT],
        retry: req.sessionId === '',
        expectedMs: 50,
        requestId: req.identity?.requestId,
      }),
    readContent: (req, budget) =>
      callUnary(c.readContent.bind(c), req, budget, {
        domain: DOMAIN,
        pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT],
        requestId: req.identity?.requestId,
      }),
    retrieve: (req, budget) =>
      callUnary(c.retrieve.bind(c), req, budget, {
        domain: DOMAIN,
        pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT],
        requestId: req.identity?.requestId,
      }),
    getTrace: (req, budget) =>
      callUnary(c.getTrace.bind(c), req, budget, { domain: DOMAIN, pass: [Code.NOT_FOUND, Code.INVALID_ARGUMENT], requestId: req.identity?.requestId }),
    close: () => c.close(),
  };
}
