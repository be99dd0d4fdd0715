/**
 * @ctxmesh/stores: store ports and their adapters (production and embedded). The contract
 * suites live in ./contract and are imported by tests only.
 */
export * from './ports';
export * from './embedded/db';
export * from './redis/lua';
export * from './redis/redis-ledger-store';
export * from './inproc/sqlite-ledger-store';
export * from './inproc/inproc-event-bus';
export * from './nats/nats-event-bus';
export * from './embedded/vector-index';
export * from './tuning';
export * from './factory';
export * from './qdrant';
export * from './traces';
export * from './caller-scope';
export { LexicalIndex, type LexicalQueryTerm, type LexicalRow, type LexicalTopKStats, type PreparedLexicalQuery } from './embedded/lexical-index';
export * from './ranking';
export { DEFAULT_ANN_OPTIONS, type AnnOptions } from './embedded/ann';
