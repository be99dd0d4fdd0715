/**
 * Exact-tokenizer work off the event loop. Counting `o200k_base`/`cl100k_base` costs about a
 * microsecond per character even with the linear counter, so a plan over a few large bodies
 * takes hundreds of milliseconds — in the all-in-one process, time during which `/health` and
 * every other caller would wait. Work above {@link INLINE_CHARS} of text runs in a worker thread
 * (piscina); smaller work, and the estimator (a few nanoseconds per character), stays inline
 * where a worker hop would cost more than the counting. A task whose budget ends is aborted
 * (its worker is terminated), so a runaway count never outlives its request.
 */
import { join, resolve } from 'node:path';
import type { planAndRender, planEvidence } from '@ctxmesh/kernel';
import { Piscina } from 'piscina';

/** Text (UTF-16 units) above which exact-tokenizer work leaves the event loop. */
export const INLINE_CHARS = 32 * 1024;

/** A task the worker runs. */
export type ExactTask =
  | { fn: 'planAndRender'; args: Parameters<typeof planAndRender> }
  | { fn: 'planEvidence'; args: Parameters<typeof planEvidence> }
  | { fn: 'countTokens'; texts: string[]; tokenizer: string };

// Under ts-jest/swc the sources run from src/: the worker is the built file beside dist/.
const WORKER = __filename.endsWith('.ts') ? resolve(__dirname, '../../dist/domain/exact-worker.js') : join(__dirname, 'exact-worker.js');

let pool: Piscina | null = null;

function poolOf(): Piscina {
  // One thread: the machines this runs on are small, and requests that need it are rare.
  pool ??= new Piscina({ filename: WORKER, minThreads: 0, maxThreads: 1, idleTimeout: 5_000 });
  return pool;
}

/**
 * True when the work must leave the event loop: an exact tokenizer over more than
 * {@link INLINE_CHARS}. Any other name runs inline, where the kernel rejects an unknown one
 * with its typed error.
 */
export function offloads(tokenizer: string, chars: number): boolean {
  return (tokenizer === 'o200k_base' || tokenizer === 'cl100k_base') && chars > INLINE_CHARS;
}

/**
 * Run `task` inline or in the worker (see {@link offloads}).
 * @param chars the UTF-16 length of the task's texts
 * @param signal aborts a task running in the worker
 * @param inline the same work, run here when it is small
 * @throws whatever `inline` throws (an unknown tokenizer always runs inline)
 */
export async function runExact<T>(task: ExactTask, tokenizer: string, chars: number, signal: AbortSignal, inline: () => T): Promise<T> {
  if (!offloads(tokenizer, chars)) return inline();
  return (await poolOf().run(task, { signal })) as T;
}

/** Stop the worker (tests, shutdown). */
export async function closeExactPool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.destroy();
}
