/** What the orchestrator's handlers run on (built once per server by `createServer`). */
import type { ContextSettings } from '../domain/context';
import type { Ports } from '../domain/ports';
import type { RetrieveSettings } from '../domain/retrieve';
import type { LatencyEstimator, StageRecord } from '../domain/stages';
import type { TraceSink } from '../domain/trace';

/** Handler environment. */
export interface HandlerEnv {
  /** The services the pipelines call. */
  ports: Ports;
  /** Context-mode settings. */
  settings: ContextSettings;
  /** Retrieve settings. */
  retrieve: RetrieveSettings;
  /** One latency estimator for every request: a stage's expected cost follows its runs. */
  estimator: LatencyEstimator;
  /** Trace store (retrieve traces and GetTrace); null = no traces. */
  traces: TraceSink | null;
  /** The stage metrics hook of a pipeline (`context` or `retrieve`). */
  observe: (pipeline: 'context' | 'retrieve') => (r: StageRecord) => void;
}
