/**
 * Operations routes, never authenticated (the plugins send auth headers to `/health` anyway):
 * `GET /health` (liveness, plugin-client §0; `{status, healthy, version, name}`), `GET /ready` (downstream readiness) and
 * `GET /metrics` (Prometheus text).
 */
import { deadLetters, metricsText, registry } from '@ctxmesh/telemetry';
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

  // `?checks=a,b` runs only the named probes. Kubernetes asks `?checks=orchestrator`: a store or
  // bus outage is shared by every replica, and taking them all out of the Service would turn a
  // degraded answer (dedup "unavailable", a 503 on writes) into no answer at all.
  app.get<{ Querystring: { checks?: string } }>('/ready', async (request, reply) => {
    let checks = opts.readiness;
    const wanted = request.query.checks;
    if (typeof wanted === 'string' && wanted !== '') {
      const names = wanted.split(',').map((n) => n.trim());
      const unknown = names.filter((n) => !opts.readiness.some((c) => c.name === n));
      if (unknown.length > 0) {
        const known = opts.readiness.map((c) => c.name).join(', ');
        return reply.code(400).send({ status: 'error', ready: false, error: { code: 'INVALID_ARGUMENT', message: `checks: unknown check ${unknown.join(', ')} (known: ${known})`, details: { field: 'checks' } } });
      }
      checks = opts.readiness.filter((c) => names.includes(c.name));
    }
    const r = await runReadiness(checks);
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
    return reply.type(registry.contentType).send(await metricsText());
  });
}
