/**
 * Load generator child process: runs autocannon against the gateway and prints one JSON line
 * with the outcome. It runs in its own process so that generating load never shares an event
 * loop with the mesh it measures (the in-process mesh lives in the bench's main process).
 *
 * Usage (internal): node loadgen.js < spec.json (a LoadSpec as JSON on stdin)
 */
import autocannon from 'autocannon';

/** What to send. */
export interface LoadSpec {
  /** Gateway base URL. */
  url: string;
  /** Concurrent connections (one request in flight each). */
  connections: number;
  /** Seconds of load. */
  seconds: number;
  /** Request path. */
  path: string;
  /** JSON bodies, sent in turn on every connection. */
  bodies: unknown[];
}

/** What the child prints. */
export interface LoadOutcome {
  connections: number;
  /** Measured seconds. */
  seconds: number;
  /** Responses received. */
  requests: number;
  /** Mean requests per second. */
  rps: number;
  /** Transport errors (resets, refused connections). */
  errors: number;
  /** Requests that timed out. */
  timeouts: number;
  /** Responses with a status outside 2xx. */
  non2xx: number;
  /** Latency under load, ms. */
  latencyMs: { p50: number; p99: number; mean: number };
}

/** The line the child prints when the load starts (after Node and autocannon have loaded). */
export const START_LINE = '{"event":"start"}';

/**
 * Run one load and resolve with its outcome.
 * @param onStart called just before the first request is sent
 */
export async function runLoadSpec(spec: LoadSpec, onStart: () => void = () => undefined): Promise<LoadOutcome> {
  onStart();
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 30,
    requests: spec.bodies.map((b) => ({ method: 'POST' as const, path: spec.path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })),
  });
  return {
    connections: spec.connections,
    seconds: result.duration,
    requests: result.requests.total,
    rps: result.requests.total / Math.max(1e-9, result.duration),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.average },
  };
}

if (require.main === module) {
  // The spec arrives on stdin (see runLoad in throughput.ts).
  const chunks: Buffer[] = [];
  process.stdin.on('data', (c: Buffer) => chunks.push(c));
  process.stdin.on('end', () => {
    const spec = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as LoadSpec;
    runLoadSpec(spec, () => process.stdout.write(`${START_LINE}\n`)).then(
      (out) => process.stdout.write(`${JSON.stringify(out)}\n`),
      (err: unknown) => {
        process.stderr.write(`loadgen: ${(err as Error)?.stack ?? String(err)}\n`);
        process.exitCode = 1;
      },
    );
  });
}
