/**
 * Processes the bench starts and measures: free ports, CPU time and resident memory read
 * from `/proc`, and stopping a child by its pid (never by name).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (bound and released; a tiny race is acceptable for a bench). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

let clkTck: number | null = null;

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 when unknown). */
export function clockTicks(): number {
  if (clkTck === null) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/**
 * User + system CPU seconds a process has used so far, from `/proc/<pid>/stat`.
 * @returns null when the process is gone or `/proc` is unavailable
 */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return (utime + stime) / clockTicks();
  } catch {
    return null;
  }
}

/**
 * Resident set size of a process in MiB (`VmRSS` of `/proc/<pid>/status`).
 * @returns null when unavailable
 */
export function rssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU used by each named process over an interval. */
export interface CpuShare {
  /** CPU seconds used in the interval. */
  cpuSeconds: number;
  /** Average cores busy (cpuSeconds / wall seconds). */
  cores: number;
  /** Share of all the CPU the sampled processes used together (0..1). */
  share: number;
}

/** Starts a CPU sample of several processes; `stop()` returns each one's use since `start`. */
export function sampleCpu(pids: Readonly<Record<string, number>>): { stop(): Record<string, CpuShare> } {
  const t0 = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  return {
    stop() {
      const wall = (performance.now() - t0) / 1000;
      const used: Record<string, number> = {};
      for (const [k, pid] of Object.entries(pids)) {
        const a = before[k];
        const b = cpuSeconds(pid);
        if (a !== null && a !== undefined && b !== null) used[k] = b - a;
      }
      const total = Object.values(used).reduce((s, v) => s + v, 0);
      return Object.fromEntries(
        Object.entries(used).map(([k, v]) => [k, { cpuSeconds: v, cores: wall > 0 ? v / wall : 0, share: total > 0 ? v / total : 0 }]),
      );
    },
  };
}

/**
 * Stop a child the bench started: SIGTERM, then SIGKILL after `graceMs`.
 * @returns the exit code or signal name
 */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(String(child.exitCode ?? child.signalCode));
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(String(code ?? signal));
    });
    child.kill('SIGTERM');
  });
}

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
