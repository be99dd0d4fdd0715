/** Test fixtures: event builders and a SessionLog over an in-memory embedded store. */
import Database from 'better-sqlite3';
import type { SessionKey, SessionStore } from '@ctxmesh/stores';
import { EmbeddedSessionStore } from '../../stores/embedded-session-store';
import type { SessionLogOptions } from '../session-log';
import { SessionLog } from '../session-log';

export const KEY: SessionKey = { account: 'acct', user: 'alice', sessionId: 's1' };

export const text = (t: string) => ({ type: 'text', text: t });
export const user = (t: string, source?: Record<string, unknown>) => ({ type: 'user/message', content: [text(t)], ...(source ? { source } : {}) });
export const system = (t: string) => ({ type: 'system/message', content: [text(t)] });
export const assistant = (t: string) => ({ type: 'assistant/message', content: [text(t)] });
export const call = (callId: string, name = 'read_file', args: unknown = { path: `/src/${callId}.ts` }) => ({ type: 'tool-call', callId, name, args });
export const assistantCalls = (t: string, ...calls: ReturnType<typeof call>[]) => ({
  type: 'assistant/message',
  content: [...(t ? [text(t)] : []), ...calls],
});
export const result = (callId: string, t: string) => ({ type: 'tool/result', callId, content: [text(t)] });
export const instructions = (scope: string, t: string) => user(t, { kind: 'agent-instructions', changes: [{ scope, path: `${scope}/AGENTS.md` }] });

/** Deterministic UUID-shaped ids: …-000000000001, …-000000000002, … */
export function counterIds(prefix = '00000000-0000-4000-8000-'): () => string {
  let n = 0;
  return () => `${prefix}${String(++n).padStart(12, '0')}`;
}

/** A fixed clock. */
export const CLOCK = () => 1_700_000_000_000;

/** A SessionLog over a fresh `:memory:` embedded store. */
export function newLog(opts: Partial<SessionLogOptions> = {}): { log: SessionLog; store: EmbeddedSessionStore; db: Database.Database } {
  const db = new Database(':memory:');
  const store = new EmbeddedSessionStore(db, { clock: CLOCK });
  const log = new SessionLog({ store, clock: CLOCK, newId: counterIds(), ...opts });
  return { log, store, db };
}

/** Every stored event JSON of a session. */
export async function rawLog(store: SessionStore, key: SessionKey = KEY): Promise<string[]> {
  return (await store.snapshot(key, -1))?.events ?? [];
}

/** Parsed stored events. */
export async function parsedLog(store: SessionStore, key: SessionKey = KEY): Promise<Array<Record<string, unknown>>> {
  return (await rawLog(store, key)).map((j) => JSON.parse(j) as Record<string, unknown>);
}

/**
 * A long conversation: system prompt, then `turns` × (user question, assistant call, tool
 * result, assistant answer), each text carrying a unique word `uid<n>u` and `size` filler chars.
 */
export function conversation(turns: number, size = 200): unknown[] {
  const out: unknown[] = [system('You are a coding agent.')];
  let n = 0;
  const filler = (c: string) => c.repeat(size);
  for (let t = 0; t < turns; t++) {
    out.push(user(`question uid${++n}u ${filler('q')}`));
    out.push(assistantCalls(`looking uid${++n}u`, call(`c${t}`)));
    out.push(result(`c${t}`, `file body uid${++n}u ${filler('r')}`));
    out.push(assistant(`answer uid${++n}u ${filler('a')}`));
  }
  return out;
}
