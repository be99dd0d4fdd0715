/**
 * Context-mode candidate gathering (context-contract §3).
 */
export * from './targets';
export * from './gather';
export * from './evidence';
