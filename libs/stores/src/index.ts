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
/** The ranking both vector indexes share (orders, fuses, scores and thresholds their candidates). */
export * as ranking from './ranking';
export { decodeTermCounts } from './ranking/terms';
export { DEFAULT_ANN_OPTIONS, type AnnOptions } from './embedded/ann';
