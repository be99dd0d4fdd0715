export { createServer, createHandlers, type SessionsDeps } from './server';
export type { SessionsHandlerDeps } from './handlers/request';
export { loadSessionsConfig, type SessionsConfig } from './config';
export { startSessions, type StartOptions as SessionsStartOptions } from './start';
export { main, EMBEDDED_DB_FILE } from './main';
export * from './stores';
export * from './domain';
