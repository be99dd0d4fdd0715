/**
 * @ctxmesh/gateway: the REST face of the mesh (OpenViking dialect): auth and identity,
 * validation and envelopes, search/content/session routes over gRPC and the event bus.
 */
export { buildApp, type GatewayDeps } from './http/app';
export { renderError, renderCtxError, type HttpError } from './http/errors';
export { DomainError, RequestValidationError } from './domain/errors';
export { loadGatewayConfig, parseApiKeys, DEFAULT_HOOKS, type GatewayConfig, type DeadlineConfig, type HooksConfig } from './config';
export { HOOK_PATHS } from './routes/hooks';
export { orchestratorClient, type OrchestratorClient } from './clients/orchestrator';
export { sessionsClient, type SessionsClient } from './clients/sessions';
export { startGateway, type StartGatewayOptions, type RunningGateway } from './start';
export { main } from './main';
export { INGEST_WRITE_SUBJECT } from './clients/ingest';
export type { ReadinessCheck } from './routes/ops';
export { packageVersion } from './version';
