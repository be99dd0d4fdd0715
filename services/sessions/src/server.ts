/**
 * createServer(deps): the sessions gRPC service over an injected SessionLog and Workspaces.
 * No env, no listening, no side effects on import.
 */
import { sessions } from '@ctxmesh/proto';
import { implement, type Handlers, type MountedService } from '@ctxmesh/rpc';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { appendEventsHandler } from './handlers/append-events';
import { appendMessagesHandler } from './handlers/append-messages';
import { compressHandler } from './handlers/compress';
import { decompressHandler } from './handlers/decompress';
import { getSearchContextHandler } from './handlers/get-search-context';
import { getStatusHandler } from './handlers/get-status';
import { listCompressibleRangesHandler } from './handlers/list-compressible-ranges';
import { projectSurfaceHandler } from './handlers/project-surface';
import { recoverOverflowHandler } from './handlers/recover-overflow';
import { reportAgentStatusHandler } from './handlers/report-agent-status';
import type { SessionsHandlerDeps } from './handlers/request';
import { searchContextHandler } from './handlers/search-context';
import { createWorkspaceHandler, getActiveWorkspaceHandler, resolveWorkspaceHandler, setActiveWorkspaceHandler } from './handlers/workspaces';

/** Dependencies. */
export interface SessionsDeps extends SessionsHandlerDeps {
  log: Logger;
  shutdownSignal?: AbortSignal;
}

/** Every RPC's handler, also callable in process (the all-in-one mesh, benchmarks). */
export function createHandlers(deps: SessionsHandlerDeps): Handlers<sessions.SessionsServiceServer> {
  return {
    appendEvents: appendEventsHandler(deps),
    projectSurface: projectSurfaceHandler(deps),
    listCompressibleRanges: listCompressibleRangesHandler(deps),
    compress: compressHandler(deps),
    decompress: decompressHandler(deps),
    searchContext: searchContextHandler(deps),
    recoverOverflow: recoverOverflowHandler(deps),
    reportAgentStatus: reportAgentStatusHandler(deps),
    getStatus: getStatusHandler(deps),
    appendMessages: appendMessagesHandler(deps),
    getSearchContext: getSearchContextHandler(deps),
    createWorkspace: createWorkspaceHandler(deps),
    setActiveWorkspace: setActiveWorkspaceHandler(deps),
    getActiveWorkspace: getActiveWorkspaceHandler(deps),
    resolveWorkspace: resolveWorkspaceHandler(deps),
  };
}

/** Build the mounted service. */
export function createServer(deps: SessionsDeps): MountedService {
  return {
    name: 'ctxmesh.sessions.v1.SessionsService',
    definition: sessions.SessionsServiceService,
    implementation: implement<sessions.SessionsServiceServer>(sessions.SessionsServiceService, createHandlers(deps), {
      domain: 'sessions',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      observe: observeRpc,
    }),
  };
}
