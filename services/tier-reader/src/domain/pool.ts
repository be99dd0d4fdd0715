/** Bounded concurrency for body reads (context-contract §4.1: reads run with concurrency 8). */

/**
 * Run `task` over `items` with at most `concurrency` in flight; results in input order. The
 * first rejection rejects the whole call (tasks that must not fail catch their own errors).
 * @param concurrency at least 1
 */
export async function mapConcurrent<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const width = Math.max(1, Math.min(Math.floor(concurrency), items.length));
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/** Split `items` into chunks of at most `size` (at least 1). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const n = Math.max(1, Math.floor(size));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}
