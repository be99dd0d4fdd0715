/**
 * Throughput (issue 8, item 3): requests/s of context mode at a given concurrency, generated
 * by autocannon in a child process, with the error count and the CPU each measured process
 * used while the load ran.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { START_LINE, type LoadOutcome, type LoadSpec } from './loadgen';
import { sampleCpu, type CpuShare } from './procs';

/** Requests of a load run that did not succeed: transport errors, timeouts and non-2xx answers. */
export function failedRequests(t: Pick<LoadOutcome, 'errors' | 'timeouts' | 'non2xx'>): number {
  return t.errors + t.timeouts + t.non2xx;
}

/** One load run. */
export interface ThroughputRun extends LoadOutcome {
  /**
   * CPU per process while the load ran (from the child's start line to its result; the load
   * generator included, as `loadgen`, without its Node start-up).
   */
  cpu: Record<string, CpuShare>;
}

/** Thrown when the load generator fails. */
export class LoadGeneratorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadGeneratorError';
  }
}

/** The built load generator (beside this file in `dist/`; from `src/` under jest, the built one). */
function loadgenScript(): string {
  const here = join(__dirname, 'loadgen.js');
  return existsSync(here) ? here : join(__dirname, '..', 'dist', 'loadgen.js');
}

/**
 * Run autocannon (child process) against `spec` while sampling the CPU of `pids`.
 * @throws LoadGeneratorError when the child exits without a result
 */
export function runLoad(spec: LoadSpec, pids: Readonly<Record<string, number>>): Promise<ThroughputRun> {
  return new Promise((resolve, reject) => {
    // The spec goes through stdin: with the docs profile's thousands of queries it is larger
    // than the system's argument limit (spawn failed with E2BIG).
    const child = spawn(process.execPath, [loadgenScript()], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(JSON.stringify(spec));
    let sample: ReturnType<typeof sampleCpu> | null = null;
    let out = '';
    let err = '';
    let cpu: Record<string, CpuShare> | null = null;
    const lines = () => out.split('\n').filter((l) => l.trim() !== '');
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const ls = lines();
      // Sample from the start line to the result line: the child's start-up and exit are not load.
      if (!sample && ls.includes(START_LINE)) sample = sampleCpu({ ...pids, loadgen: child.pid ?? -1 });
      const done = ls.some((l) => l !== START_LINE) && out.endsWith('\n');
      if (sample && !cpu && done) cpu = sample.stop();
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', (e) => reject(new LoadGeneratorError(`load generator did not start: ${e.message}`)));
    child.on('exit', (code) => {
      const line = lines().find((l) => l !== START_LINE && l.trim().startsWith('{'));
      if (code !== 0 || !line) {
        reject(new LoadGeneratorError(`load generator exited ${code}: ${err.slice(-500)}`));
        return;
      }
      resolve({ ...(JSON.parse(line) as LoadOutcome), cpu: cpu ?? {} });
    });
  });
}
