/** The sessions domain: pure logic over the session log (overflow-recovery §3). */
export * from './errors';
export * from './events';
export * from './text';
export * from './tokens';
export * from './classify';
export * from './projection';
export * from './ranges';
export * from './transaction';
export * from './append';
export * from './compress';
export * from './recovery';
export * from './reads';
export * from './search';
export * from './decompress';
export * from './config';
export * from './session-log';
export * from './capture';
export * from './workspaces';
export { IDEMPOTENCY_TTL_SECONDS } from './idempotency';
export { MAX_APPEND_EVENTS, MAX_COMPRESS_RANGES } from './inputs';
export type {
  AgentStatusInput,
  AppendEventsInput,
  CompressInput,
  CompressRangeInput,
  CompressRangeRequest,
  DecompressInput,
  ProjectSurfaceInput,
  RecoverOverflowInput,
  RouteInput,
  SearchContextInput,
  SearchContextRequestInput,
  WindowInput,
} from './inputs';
export * from './synthetic';
