/**
 * @ctxmesh/ctxmesh: the launcher. `startMesh` runs every service in one process (the e2e
 * tests and benchmarks use it); the CLI lives in `bin.ts`.
 */
export { startMesh, loadMeshConfig, DB_FILE, type Mesh, type MeshOptions } from './mesh';
export { planIngest, runIngest, formatSummary, uriFor, type IngestItem, type IngestSummary } from './ingest';
export { callGateway, isUp, GatewayError } from './http';
export { fetchDeadLetters, formatDeadLetters, type DeadLetterRow } from './dead-letters';
