export * from './vector-index';
export * from './event-bus';
export * from './ledger-store';
export * from './session-store';
export * from './errors';
