/**
 * The gateway's domain layer: it validates. Plain functions over parsed JSON bodies, query
 * strings and headers (no Fastify, no protobuf): routes call, in order, `requestIdFrom` →
 * `resolveIdentity` → `validate*Body`, and hand what they return to `mapping/`; what they throw
 * is the error catalogue's (`errors.ts`).
 */
export * from './errors';
export * from './schema';
export * from './headers';
export * from './uris';
export * from './filter';
export * from './telemetry';
export * from './requests';
export * from './retrieve';
export * from './query';
export * from './write';
export * from './sessions';
export * from './session-log';
export * from './hooks';
