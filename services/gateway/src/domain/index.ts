/**
 * Gateway domain logic: plain functions over parsed JSON bodies and headers (no Fastify).
 * Routes call, in order: `requestIdFrom` → `resolveIdentity` → `validate*Body`, and render
 * thrown `RequestValidationError`/`DomainError` with their `toEnvelope()` and `status`.
 */
export * from './errors';
export * from './schema';
export * from './headers';
export * from './uris';
export * from './filter';
export * from './telemetry';
export * from './requests';
