export { createServer, createHandlers, DEFAULT_STORE_TIMEOUT_MS, type LedgerDeps } from './server';
export { loadLedgerConfig, type LedgerConfig } from './config';
export { startLedger, type StartOptions as LedgerStartOptions } from './start';
export { main, EMBEDDED_DB_FILE } from './main';
export { createLedgerStore, type LedgerStoreConfig } from './stores/ledger-store';
export * from './domain/ledger';
