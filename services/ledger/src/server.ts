/**
 * createServer(deps): the ledger's gRPC service over an injected LedgerStore. No env, no
 * listening, no side effects on import.
 */
import { ledger } from '@ctxmesh/proto';
import { implement, type MountedService } from '@ctxmesh/rpc';
import type { LedgerStore } from '@ctxmesh/stores';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { beginTurnHandler } from './handlers/begin-turn';
import { recordServedHandler } from './handlers/record-served';

/** Default longest wait for one store call, ms. */
export const DEFAULT_STORE_TIMEOUT_MS = 1000;

/** Dependencies. */
export interface LedgerDeps {
  /** The ledger store (Redis or embedded); the caller owns it. */
  store: LedgerStore;
  log: Logger;
  /** Longest wait for one store call before the request degrades, ms. @default 1000 */
  storeTimeoutMs?: number;
  shutdownSignal?: AbortSignal;
}

/** The handlers over a store, also callable in process (the all-in-one mesh, benchmarks). */
export function createHandlers(store: LedgerStore, storeTimeoutMs = DEFAULT_STORE_TIMEOUT_MS) {
  return {
    beginTurn: beginTurnHandler(store, storeTimeoutMs),
    recordServed: recordServedHandler(store, storeTimeoutMs),
  };
}

/** Build the mounted service. */
export function createServer(deps: LedgerDeps): MountedService {
  return {
    name: 'ctxmesh.ledger.v1.LedgerService',
    definition: ledger.LedgerServiceService,
    implementation: implement<ledger.LedgerServiceServer>(ledger.LedgerServiceService, createHandlers(deps.store, deps.storeTimeoutMs), {
      domain: 'ledger',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      observe: observeRpc,
    }),
  };
}
