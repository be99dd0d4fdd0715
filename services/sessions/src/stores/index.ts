/** SessionStore adapters owned by the sessions service. */
export * from './redis-session-store';
export * from './embedded-session-store';
