/**
 * `ctxmesh dead-letters`: the writes the indexer gave up on (accepted, then failed on every
 * attempt, or malformed), as the gateway's admin route lists them.
 */
import { callGateway, type ClientOptions } from './http';

/** One dead letter as `GET /api/v1/admin/dead-letters` answers it. */
export interface DeadLetterRow {
  seq: number;
  write_id: string;
  subject: string;
  uri: string;
  account: string;
  user: string;
  mode: string;
  attempts: number;
  error: string;
}

/**
 * Fetch the last `limit` dead letters the caller may see (an admin: their account's; root and
 * dev mode: all).
 * @param limit 1–1000 @default 100
 */
export async function fetchDeadLetters(opts: ClientOptions, limit = 100): Promise<DeadLetterRow[]> {
  const res = await callGateway<{ dead_letters: DeadLetterRow[] }>(opts, 'GET', `/api/v1/admin/dead-letters?limit=${limit}`);
  return res.dead_letters;
}

/** The rows as a table (oldest first), or a one-line note when there are none. */
export function formatDeadLetters(rows: readonly DeadLetterRow[]): string {
  if (rows.length === 0) return 'no dead letters';
  const lines = rows.map((r) => `${r.seq}\t${r.write_id}\t${r.account}/${r.user}\t${r.mode}\t${r.uri}\t${r.attempts}\t${r.error.replace(/\s+/g, ' ').slice(0, 200)}`);
  return ['seq\twrite_id\taccount/user\tmode\turi\tattempts\terror', ...lines, `${rows.length} dead letter${rows.length === 1 ? '' : 's'}`].join('\n');
}
