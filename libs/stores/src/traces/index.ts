/** Trace store: the port, its adapters (NATS JetStream, embedded SQLite). */
export * from './trace-store';
export * from './sqlite-trace-store';
export * from './nats-trace-store';
