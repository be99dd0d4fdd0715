export * from './errors';
export * from './budget';
export * from './server';
export * from './client';
export * from './health';
export * from './identity';
export * from './port';
export * from './inproc';
