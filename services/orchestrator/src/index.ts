export { createServer, STAGE_PRIORS, type OrchestratorDeps } from './server';
export { loadOrchestratorConfig } from './config';
export { startOrchestrator } from './start';
export { main, settingsFromConfig } from './main';
export { grpcPorts, type DownstreamAddrs } from './clients/grpc';
export { assembleContext, type ContextSettings } from './domain/context';
export { listSearch } from './domain/search';
export { LatencyEstimator, StageRunner } from './domain/stages';
export type { Ports } from './domain/ports';
