/**
 * Operations routes, never authenticated (the plugins send auth headers to `/health` anyway):
 * `GET /health` (liveness, plugin-client §0; `{status, healthy, version, name}`), `GET /ready` (downstream readiness) and
 * `GET /metrics` (Prometheus text).
 */
import { deadLetters, registry } from '@ctxmesh/telemetry';
import type { FastifyInstance } from 'fastify';

/** `name` in `GET /health`: what a client checks before trusting the answers. */
export const GATEWAY_NAME = 'ctxmesh';

/** One readiness probe behind `GET /ready`. */
export interface ReadinessCheck {
  /** Name reported in `checks`, e.g. `orchestrator`, `event_bus`. */
  name: string;
  /** A failing critical check makes `/ready` answer 503; others are only reported. */
  critical: boolean;
  /** True when ready. A throw counts as not ready. */
  check(): Promise<boolean>;
}

/** Options of {@link opsRoutes}. */
export interface OpsOptions {
  /** Package version for `/health`. */
  version: string;
  /** Probes, run concurrently on every `/ready`. */
  readiness: readonly ReadinessCheck[];
  /** Dead letters the ingest bus holds, read on every scrape (`ctxmesh_ingest_dead_letters`). */
  deadLetterCount?: () => Promise<number>;
}

/** Run every probe; a throw is "not ready". */
export async function runReadiness(checks: readonly ReadinessCheck[]): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
  const states = await Promise.all(checks.map((c) => c.check().then(Boolean, () => false)));
  const out: Record<string, boolean> = {};
  checks.forEach((c, i) => (out[c.name] = states[i]));
  return { ready: checks.every((c, i) => states[i] || !c.critical), checks: out };
}

/** Mount the operations routes. */
export function opsRoutes(app: FastifyInstance, opts: OpsOptions): void {
  // `name` lets a client (the CLI) tell a ctxmesh gateway from whatever else answers on a port.
  app.get('/health', async () => ({ status: 'ok', healthy: true, version: opts.version, name: GATEWAY_NAME }));

  app.get('/ready', async (_request, reply) => {
    const r = await runReadiness(opts.readiness);
    return reply.code(r.ready ? 200 : 503).send({ status: r.ready ? 'ok' : 'error', ready: r.ready, checks: r.checks });
  });

  app.get('/metrics', async (request, reply) => {
    if (opts.deadLetterCount) {
      // A bus that cannot answer leaves the last value: the scrape itself must not fail.
      await opts.deadLetterCount().then(
        (n) => deadLetters.set(n),
        (err: unknown) => request.log.warn({ err }, 'dead-letter count unavailable'),
      );
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
