/**
 * The sessions service's store: the data it owns is the session keys and `ws:*` keys in Redis
 * (or, embedded, the `sessions_*` tables of the shared SQLite file). The composition root
 * picks one; nothing falls back from a configured Redis to the embedded store.
 */
import type { SessionStore } from '@ctxmesh/stores';
import type { WorkspaceStore } from '../domain/workspaces';
import { EmbeddedSessionStore } from './embedded-session-store';
import { RedisSessionStore } from './redis-session-store';

/** Both ports the service needs, from one adapter. */
export type SessionsStore = SessionStore & WorkspaceStore;

/** Which adapter to run on. */
export type SessionsStoreConfig =
  | {
      /** Redis: one hash slot per session, one Lua script per mutation. */
      kind: 'redis';
      /** A connected client (the caller owns and quits it). */
      redis: ConstructorParameters<typeof RedisSessionStore>[0]['redis'];
      /** Key prefix (no braces). @default "" */
      keyPrefix?: string;
    }
  | {
      /** The embedded SQLite file shared with the other embedded stores. */
      kind: 'embedded';
      /** An open database handle (the caller owns and closes it). */
      db: ConstructorParameters<typeof EmbeddedSessionStore>[0];
    };

/** Build the service's store from configuration. */
export function createSessionsStore(cfg: SessionsStoreConfig): SessionsStore {
  return cfg.kind === 'redis' ? new RedisSessionStore({ redis: cfg.redis, keyPrefix: cfg.keyPrefix }) : new EmbeddedSessionStore(cfg.db);
}
