/**
 * How fast this host runs CPU-bound JavaScript right now: a fixed integer workload, timed.
 * The load average misses what slows a shared virtual machine most (a neighbour's work on the
 * same physical cores: runs of the same code measured 2–2.5× apart at the same load average),
 * so a report records this probe at its start and end, and runs compare only when their
 * probes agree.
 */

/** One probe's outcome. */
export interface HostProbe {
  /** Median wall time of the workload, ms (higher = a slower host). */
  ms: number;
  /** The workload's result: fixed for a given `iterations` (proves the work was done). */
  checksum: number;
}

/** Iterations of the default probe (≈ 50–100 ms on an idle 2-core development machine). */
export const HOST_PROBE_ITERATIONS = 50_000_000;

/** Run the xorshift workload once. @returns its checksum */
export function probeWork(iterations: number): number {
  let x = 0x9e3779b9 | 0;
  let sum = 0;
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    sum = (sum + (x & 0xffff)) | 0;
  }
  return sum >>> 0;
}

/**
 * Time the workload `runs` times and keep the median.
 * @throws RangeError for a non-positive iteration or run count
 */
export function probeHost(iterations = HOST_PROBE_ITERATIONS, runs = 3): HostProbe {
  if (!(Number.isInteger(iterations) && iterations > 0)) throw new RangeError(`iterations must be a positive integer, got ${iterations}`);
  if (!(Number.isInteger(runs) && runs > 0)) throw new RangeError(`runs must be a positive integer, got ${runs}`);
  const times: number[] = [];
  let checksum = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    checksum = probeWork(iterations);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(runs / 2)]!, checksum };
}
