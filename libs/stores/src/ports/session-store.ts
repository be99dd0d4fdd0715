/**
 * SessionStore port: the append-only session log and its cached projections
 * (overflow-recovery §3.2). Adapters: Redis (one hash slot per session; every mutation one
 * Lua script that checks head and generation) and the embedded SQLite file.
 * The sessions service refines this port; this is the minimum shape other code relies on.
 */

/** Key of a session. */
export interface SessionKey {
  /** Account. */
  account: string;
  /** User. */
  user: string;
  /** Session id. */
  sessionId: string;
}

/** The port (filled by the sessions issue). */
export interface SessionStore {
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
