/**
 * Ingest (issue 8, item 4): documents per second through the real write path —
 * `POST /api/v1/content/write` with `wait:true` → event bus (in-process or NATS JetStream) →
 * indexer (records, embedding, store) → done notice → 200. With `wait:true` a write only
 * counts once it is searchable.
 */
import type { CorpusDoc } from './corpus';
import type { JsonClient } from './http';
import { summarize, type Summary } from './stats';

/** Outcome of an ingest run. */
export interface IngestResult {
  /** Documents sent. */
  docs: number;
  /** Documents acknowledged as applied (HTTP 200). */
  applied: number;
  /** Writes that failed (non-200 or no response). */
  errors: number;
  /** Wall time from the first write to the last answer, s. */
  seconds: number;
  /** Applied documents per second. */
  docsPerSecond: number;
  /** Latency of one write (publish → applied), ms. */
  writeMs: Summary;
  /** Concurrent writers. */
  concurrency: number;
  /** First failure, if any. */
  firstError?: string;
}

/**
 * Write `items` through the gateway with `concurrency` writers, each waiting for its write to
 * be applied before sending the next.
 */
export async function ingestThroughGateway(client: JsonClient, items: readonly CorpusDoc[], concurrency: number): Promise<IngestResult> {
  let next = 0;
  let applied = 0;
  let errors = 0;
  let firstError: string | undefined;
  const lat: number[] = [];
  const t0 = performance.now();
  const worker = async () => {
    while (next < items.length) {
      const d = items[next++]!;
      try {
        const r = await client.post('/api/v1/content/write', { uri: d.uri, content: d.content, mode: 'replace', wait: true });
        if (r.status === 200) {
          applied++;
          lat.push(r.ms);
        } else {
          errors++;
          firstError ??= `${d.uri}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
        }
      } catch (err) {
        errors++;
        firstError ??= `${d.uri}: ${(err as Error).message}`;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { docs: items.length, applied, errors, seconds, docsPerSecond: applied / Math.max(1e-9, seconds), writeMs: summarize(lat), concurrency, ...(firstError ? { firstError } : {}) };
}
