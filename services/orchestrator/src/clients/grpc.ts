/**
 * The orchestrator's ports: over gRPC (`grpcPort` per downstream), or in process
 * (`inProcessPort`) for a downstream mounted in the same thread (the one-process mesh). Each
 * call carries the
 * caller's Budget (deadline + parent) and translates downstream codes deliberately:
 * INVALID_ARGUMENT passes only where the orchestrator forwards the caller's own input (gather
 * validates the query/image; budget-render the tokenizer; tier-reader a content read), NOT_FOUND
 * and PERMISSION_DENIED where they describe the caller's target (content reads, workspaces,
 * retrieve's subject). Everything else becomes INTERNAL (STYLE B6).
 */
import { budgetRender, gather, ledger, rewrite, sessions, tierReader } from '@ctxmesh/proto';
import { Code, grpcPort, inProcessPort, ThreadChannel, type MountedService, type Port, type PortOptions, type ServiceClientConstructor } from '@ctxmesh/rpc';
import type { Client } from '@grpc/grpc-js';
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

/**
 * Downstreams of this process, by port: a service mounted in this thread is called in process,
 * one served in another thread of it over that thread's {@link ThreadChannel} (same handlers,
 * deadlines, error mapping and metrics, no HTTP/2 or protobuf either way). Never a service of
 * another process.
 */
export type LocalServices = Partial<Record<keyof DownstreamAddrs, MountedService | ThreadChannel>>;

/** Ports over gRPC, or in process for the downstreams in `local`, plus a close hook for their channels. */
export function grpcPorts(addrs: DownstreamAddrs, local: LocalServices = {}): Ports & { close(): void } {
  const port = <C extends Client>(key: keyof DownstreamAddrs, Ctor: ServiceClientConstructor<C>, opts: PortOptions<C>): Port<C> & { close(): void } => {
    const mounted = local[key];
    if (mounted instanceof ThreadChannel) return mounted.port<C>(Ctor.service, opts);
    return mounted ? inProcessPort<C>(mounted, opts) : grpcPort(Ctor, addrs[key], opts);
  };
  const ports = {
    gather: port('gather', gather.GatherServiceClient, {
      domain: 'gather',
      methods: {
        find: { pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] },
        gatherCandidates: { pass: [Code.INVALID_ARGUMENT] },
        gatherPassages: { pass: [Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED] },
      },
    }),
    tierReader: port('tierReader', tierReader.TierReaderServiceClient, {
      domain: 'tier-reader',
      methods: { readContent: { pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] } },
    }),
    budgetRender: port('budgetRender', budgetRender.BudgetRenderServiceClient, {
      domain: 'budget-render',
      methods: { planRender: { pass: [Code.INVALID_ARGUMENT] }, countTokens: { pass: [Code.INVALID_ARGUMENT] } },
    }),
    // A turn must not advance twice: BeginTurn is never retried.
    ledger: port('ledger', ledger.LedgerServiceClient, { domain: 'ledger', methods: { beginTurn: { retry: false } } }),
    rewrite: port('rewrite', rewrite.RewriteServiceClient, { domain: 'rewrite' }),
    sessions: port('sessions', sessions.SessionsServiceClient, {
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
