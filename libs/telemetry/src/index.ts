/**
 * @ctxmesh/telemetry: the ONLY package that imports the OpenTelemetry SDK and
 * instrumentations (others use @opentelemetry/api), plus the Prometheus registry.
 *
 * Tracing is opt-in: it starts only when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_TRACES_EXPORTER) is configured, so a laptop run pays nothing for it. Start it before
 * anything imports grpc-js or http (STYLE B7 step 2).
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** Process-wide metrics registry (`GET /metrics`). */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'ctxmesh_' });

/** gRPC server handler latency by service, method and status code. */
export const rpcDuration = new Histogram({
  name: 'ctxmesh_rpc_server_duration_seconds',
  help: 'gRPC handler latency',
  labelNames: ['service', 'method', 'code'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** HTTP request latency at the gateway by route and status. */
export const httpDuration = new Histogram({
  name: 'ctxmesh_http_request_duration_seconds',
  help: 'HTTP request latency at the gateway',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Pipeline stage latency by pipeline, stage and outcome (ok, skipped, failed, timeout). */
export const stageDuration = new Histogram({
  name: 'ctxmesh_stage_duration_seconds',
  help: 'Orchestrator stage latency',
  labelNames: ['pipeline', 'stage', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Events processed by the indexer by outcome. */
export const ingestEvents = new Counter({
  name: 'ctxmesh_ingest_events_total',
  help: 'Ingest events handled by the indexer',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Writes per batch the indexer's ingest consumer applied together (one store write, shared embedder calls). */
export const ingestBatchSize = new Histogram({
  name: 'ctxmesh_ingest_batch_size',
  help: 'Writes the indexer applied in one batch',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: [registry],
});

/**
 * Dead letters the ingest bus holds (writes accepted and later given up on), read from the
 * bus when `/metrics` is scraped (the gateway sets it just before rendering).
 */
export const deadLetters = new Gauge({
  name: 'ctxmesh_ingest_dead_letters',
  help: 'Dead letters held by the ingest bus (writes accepted, then given up on)',
  registers: [registry],
});

/** Kinds of background work an index reports (see {@link addBackgroundWork}). */
export type BackgroundWorkKind = 'ann' | 'lexical';

/** Reads the rows an index still has to absorb in the background, by kind. */
export type BackgroundWork = () => Partial<Record<BackgroundWorkKind, number>>;

const backgroundReaders = new Set<BackgroundWork>();

/**
 * Rows the embedded index still has to absorb in the background, read at each scrape: rows to add
 * to its HNSW indexes (`ann`; searches scan exactly meanwhile — after a large ingest this can last
 * many minutes) and rows in its lexical tail still to merge into blocks (`lexical`). No series
 * while no index reports (a Qdrant-backed mesh).
 */
export const indexBackgroundRows = new Gauge({
  name: 'ctxmesh_index_background_rows',
  help: 'Rows the embedded index still has to absorb in the background (ann: to add to its HNSW indexes; lexical: to merge from its tail into blocks)',
  labelNames: ['work'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (backgroundReaders.size === 0) return;
    const sum: Record<BackgroundWorkKind, number> = { ann: 0, lexical: 0 };
    for (const read of backgroundReaders) {
      try {
        const w = read();
        sum.ann += w.ann ?? 0;
        sum.lexical += w.lexical ?? 0;
      } catch {
        // A closed index has nothing left to do.
      }
    }
    for (const work of ['ann', 'lexical'] as const) this.set({ work }, sum[work]);
  },
});

/**
 * Report an index's background work in {@link indexBackgroundRows}.
 * @returns a function that stops reporting it (call it when the index closes)
 */
export function addBackgroundWork(read: BackgroundWork): () => void {
  backgroundReaders.add(read);
  return () => void backgroundReaders.delete(read);
}

/** Metrics of another thread of this process, as prom-client's JSON (see {@link ownMetrics}). */
export type MetricsSource = () => Promise<Array<MetricObjectWithValues<MetricValue<string>>>>;

const sources = new Set<MetricsSource>();

/**
 * Add the metrics of another thread to {@link metricsText} (the one-process mesh's search
 * thread serves gather and tier-reader). @returns a function that removes the source
 */
export function addMetricsSource(source: MetricsSource): () => void {
  sources.add(source);
  return () => void sources.delete(source);
}

/** True for the default process and runtime metrics (`collectDefaultMetrics`), which the main thread reports. */
function isDefaultMetric(name: string): boolean {
  return /^ctxmesh_(process|nodejs)_/.test(name);
}

/**
 * This thread's own metrics for a parent thread's {@link metricsText}: everything but the
 * default process and runtime metrics (the process is one; the parent reports it).
 */
export async function ownMetrics(): Promise<Array<MetricObjectWithValues<MetricValue<string>>>> {
  return (await registry.getMetricsAsJSON()).filter((m) => !isDefaultMetric(m.name));
}

/**
 * The Prometheus exposition text of this thread's registry merged with every
 * {@link addMetricsSource} (counters and histograms summed by name and labels). A source that
 * fails or does not answer is left out of this scrape.
 */
export async function metricsText(): Promise<string> {
  if (sources.size === 0) return registry.metrics();
  const others = await Promise.all([...sources].map((s) => s().catch(() => [])));
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]).metrics();
}

/** Observer for `implement({ observe })` of @ctxmesh/rpc. */
export function observeRpc(o: { service: string; method: string; code: string; durationMs: number }): void {
  rpcDuration.labels(o.service, o.method, o.code).observe(o.durationMs / 1000);
}

/** A started telemetry pipeline. */
export interface Telemetry {
  /** True when traces are exported. */
  tracing: boolean;
  /** Flush and stop. */
  shutdown(): Promise<void>;
}

/**
 * Start OpenTelemetry tracing when configured by the standard OTEL_* environment
 * variables; otherwise a no-op.
 */
export function startTelemetry(serviceName: string, env: Record<string, string | undefined> = process.env): Telemetry {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_TRACES_EXPORTER) {
    return { tracing: false, shutdown: async () => undefined };
  }
  // Loaded lazily so a run without tracing never pays for the SDK.
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [new GrpcInstrumentation(), new HttpInstrumentation()],
  });
  sdk.start();
  return { tracing: true, shutdown: () => sdk.shutdown() };
}

let otelApi: typeof import('@opentelemetry/api') | undefined;

/**
 * The trace id of the span active in the current context (W3C hex, 32 characters), or null
 * when tracing is off or nothing is being recorded. Context mode's `explain.trace_id`.
 */
export function activeTraceId(): string | null {
  // Loaded on first use (a process that never asks does not load the API), then kept: a
  // `require` per context request cost more than the lookup.
  otelApi ??= require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { trace, isSpanContextValid } = otelApi;
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && isSpanContextValid(ctx) ? ctx.traceId : null;
}
