export * from './config';
export * from './logger';
export * from './connections';
export * from './main';
export * from './worker-script';
