/** SessionStore and WorkspaceStore adapters owned by the sessions service. */
export * from './redis-session-store';
export * from './embedded-session-store';
export * from './sessions-store';
