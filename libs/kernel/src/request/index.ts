/**
 * Request-level pure logic: quotas, penalties, planned queries, `/recall` folding, and the
 * normalised context request type.
 */
export * from './python';
export * from './types';
export * from './quotas';
export * from './penalties';
export * from './queries';
export * from './params';
export * from './recall';
