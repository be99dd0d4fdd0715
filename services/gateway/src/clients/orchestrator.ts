/**
 * The orchestrator's port (`grpcPort`): every method takes the request's Budget (deadline +
 * cancel on client disconnect) and translates downstream codes deliberately (STYLE B6): only
 * the codes this gateway can explain to its caller pass through.
 */
import { orchestrator } from '@ctxmesh/proto';
import { Code, grpcPort, inProcessPort, type MountedService, type Port, type PortOptions } from '@ctxmesh/rpc';

/** The orchestrator's RPCs, each under the request's Budget; routes take the ones they call (`Pick`). */
export type OrchestratorPort = Port<orchestrator.OrchestratorServiceClient>;

/** The orchestrator's port plus `close()` for the channel. */
export type OrchestratorClient = OrchestratorPort & { close(): void };

/**
 * Connect to the orchestrator at `host:port`, or call it in process when it is mounted in this
 * thread (`local`, what the one-process launcher passes): the same port, options and error
 * translation either way.
 */
export function orchestratorClient(address: string, local?: Pick<MountedService, 'definition' | 'implementation' | 'name'>): OrchestratorClient {
  return local ? inProcessPort(local, ORCHESTRATOR_PORT) : grpcPort(orchestrator.OrchestratorServiceClient, address, ORCHESTRATOR_PORT);
}

/** The orchestrator port's options, over either transport. */
const ORCHESTRATOR_PORT: PortOptions<orchestrator.OrchestratorServiceClient> = {
  domain: 'orchestrator',
  // The gateway's budgets carry no request id: the identity's travels as x-request-id.
  requestIdFromIdentity: true,
  methods: {
    // List mode: INVALID_ARGUMENT (the gateway validated the query, target and filter it sends)
    // and PERMISSION_DENIED pass through.
    search: { pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] },
    // Context assembly: INVALID_ARGUMENT passes (gathering's empty-query and image rejections
    // are the caller's input). Retried on UNAVAILABLE only without a session: a request naming
    // a session advances its turn clock and must not run twice.
    assembleContext: (req) => ({ pass: [Code.INVALID_ARGUMENT], retry: req.sessionId === '', expectedMs: 50 }),
    // One node's tier text.
    readContent: { pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] },
    // Retrieve: NOT_FOUND / PERMISSION_DENIED (workspace, subject) and INVALID_ARGUMENT (the
    // validated query) pass through.
    retrieve: { pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] },
    // A retrieval trace: NOT_FOUND and INVALID_ARGUMENT (the id from the path) pass through.
    getTrace: { pass: [Code.NOT_FOUND, Code.INVALID_ARGUMENT] },
  },
};

