/**
 * @ctxmesh/kernel: the pure context-assembly logic shared by the services and by the
 * in-process benchmark, and the rules more than one service checks (URIs, session ids, what a
 * write may carry). No I/O here: callers inject searches and body reads.
 */
export * from './errors';
export * from './uri';
export * from './budget';
export * from './gather';
export * from './request';
export * from './session-ids';
export * from './write-rules';
