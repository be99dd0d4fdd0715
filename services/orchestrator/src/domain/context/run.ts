/**
 * What every step of context assembly shares, and the table of its optional stages.
 */
import type { Budget } from '@ctxmesh/rpc';
import type { Ports } from '../ports';
import type { OptionalStage, StageRunner } from '../stages';
import type { ContextInput, ContextSettings } from './input';

/** One assembly in progress: the request, the services, the settings, the budget and the stage records. */
export interface ContextRun {
  readonly input: ContextInput;
  readonly ports: Ports;
  readonly settings: ContextSettings;
  /** The request's deadline budget (a step that fails after it ran out rethrows). */
  readonly budget: Budget;
  readonly runner: StageRunner;
}

/** What the optional stages' rules read. */
export interface ContextFacts {
  readonly input: ContextInput;
  readonly settings: ContextSettings;
  /** Candidates gathered so far. */
  readonly candidates: number;
  /** Entries placed in the block so far. */
  readonly entries: number;
}

/**
 * Context mode's optional stages (context-contract §8, §10.2, §10.4), in run order: when each
 * is not entered, and its fuse. Everything else is mandatory.
 */
export const CONTEXT_STAGES = {
  queryExpansion: {
    name: 'query_expansion',
    fuseMs: (f) => f.settings.expansionTimeoutMs,
    skipWhen: [
      ['NOT_REQUESTED', (f) => f.input.queryExpansion === 'off'],
      // Expansion reads the session's messages, and needs intent analysis and a model.
      ['NOT_CONFIGURED', (f) => !f.input.sessionId || !f.settings.enableIntent || !f.settings.modelConfigured],
    ],
  },
  rerank: {
    name: 'rerank',
    fuseMs: (f) => f.settings.rerankTimeoutMs ?? 8000,
    skipWhen: [
      ['NOT_CONFIGURED', (f) => !f.settings.rerank],
      ['NOTHING_TO_DO', (f) => f.candidates < 2],
    ],
  },
  rewrite: {
    name: 'rewrite',
    fuseMs: (f) => f.settings.rewriteTimeoutMs,
    skipWhen: [
      ['NOT_REQUESTED', (f) => f.input.rewrite === 'off'],
      ['NO_ENTRIES', (f) => f.entries === 0],
    ],
  },
} as const satisfies Record<string, OptionalStage<ContextFacts>>;

/** The facts of `run` at a point of the pipeline. */
export function factsOf(run: ContextRun, at: { candidates?: number; entries?: number } = {}): ContextFacts {
  return { input: run.input, settings: run.settings, candidates: at.candidates ?? 0, entries: at.entries ?? 0 };
}
