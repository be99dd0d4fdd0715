import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { cpuSeconds, freePort, rssMiB, sampleCpu, stopChild } from './procs';

describe('cpuSeconds and rssMiB', () => {
  it('read this process from /proc and grow with work', () => {
    const before = cpuSeconds(process.pid);
    expect(before).not.toBeNull();
    const until = Date.now() + 150;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    expect(cpuSeconds(process.pid)!).toBeGreaterThan(before!);
    expect(rssMiB(process.pid)).toBeGreaterThan(10);
  });

  it('return null for a process that does not exist', () => {
    expect(cpuSeconds(2 ** 22 + 12345)).toBeNull();
    expect(rssMiB(2 ** 22 + 12345)).toBeNull();
  });
});

describe('sampleCpu', () => {
  it('attributes CPU to the process that used it, with shares summing to 1', () => {
    const s = sampleCpu({ me: process.pid });
    const until = Date.now() + 120;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const out = s.stop();
    expect(x).toBeGreaterThan(0);
    expect(out.me!.cpuSeconds).toBeGreaterThan(0);
    expect(out.me!.share).toBe(1);
    expect(out.me!.cores).toBeGreaterThan(0);
  });
});

describe('freePort', () => {
  it('returns a port that can be bound', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    await new Promise<void>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
    });
  });
});

describe('stopChild', () => {
  it('stops a child it started with SIGTERM', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    expect(await stopChild(child, 5000)).toBe('SIGTERM');
    expect(await stopChild(child)).toBe('SIGTERM');
  });
});
