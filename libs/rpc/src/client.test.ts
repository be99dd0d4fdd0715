import { Metadata, status, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { Budget } from './budget';
import { callUnary, retryBackoffMs, type UnaryMethod } from './client';
import { CtxError } from './errors';

/** The largest double below 1: the top of a [0, 1) source. */
const TOP = 1 - Number.EPSILON / 2;

/** A unary method that fails every call with `code`, counting the calls (no network). */
function failing(code: status): { method: UnaryMethod<object, object>; calls: () => number } {
  let calls = 0;
  const method: UnaryMethod<object, object> = (_req, _md, _opts, cb) => {
    calls++;
    const err = Object.assign(new Error(`${code} down`), { code, details: 'down', metadata: new Metadata() }) as ServiceError;
    setImmediate(() => cb(err, {}));
    return { cancel: () => undefined, on: () => undefined } as unknown as ClientUnaryCall;
  };
  return { method, calls: () => calls };
}

/** A [0, 1) source that always answers `v`, counting its draws. */
function fixed(v: number) {
  const random = jest.fn(() => v);
  return random;
}

describe('retryBackoffMs', () => {
  it.each([
    [0, 10],
    [1, 40],
    [2, 160],
  ])('retry %p - waits within [nominal / 2, nominal) of %p ms', (attempt, nominal) => {
    expect(retryBackoffMs(attempt, () => 0)).toBe(nominal / 2);
    expect(retryBackoffMs(attempt, () => 0.5)).toBe(Math.floor(nominal * 0.75));
    expect(retryBackoffMs(attempt, () => TOP)).toBe(nominal - 1);
  });

  it('stops after three retries, without drawing', () => {
    const random = fixed(0.5);
    expect(retryBackoffMs(3, random)).toBeUndefined();
    expect(random).not.toHaveBeenCalled();
  });

  it('draws from Math.random by default, within the bounds', () => {
    for (let i = 0; i < 200; i++) {
      const ms = retryBackoffMs(1)!;
      expect(ms).toBeGreaterThanOrEqual(20);
      expect(ms).toBeLessThan(40);
      expect(Number.isInteger(ms)).toBe(true);
    }
  });
});

describe('callUnary retries', () => {
  it('UNAVAILABLE - three jittered retries, one draw each, then the code passes through', async () => {
    const { method, calls } = failing(status.UNAVAILABLE);
    const random = fixed(0);
    const budget = Budget.ofMs(10_000);
    try {
      const err = await callUnary(method, {}, budget, { domain: 'd', random }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CtxError);
      expect((err as CtxError).code).toBe(status.UNAVAILABLE);
      expect(calls()).toBe(4);
      expect(random).toHaveBeenCalledTimes(3);
    } finally {
      budget.dispose();
    }
  });

  it('the budget check uses the jittered wait, not the nominal one', async () => {
    // A frozen clock: 12 ms stay left. The first retry needs wait + 5 ms expected latency:
    // 5 + 5 fits (jitter at its bottom), 9 + 5 does not (at its top); the second
    // retry (≥ 20 ms) never fits.
    const clock = { now: () => 1_000_000 };
    for (const [r, want] of [
      [0, 2],
      [TOP, 1],
    ] as const) {
      const { method, calls } = failing(status.RESOURCE_EXHAUSTED);
      // Fake timers: the budget's own 12 ms deadline timer must not fire during the 5 ms
      // retry wait, which a stalled host made it do with real timers (one call, not two).
      jest.useFakeTimers();
      const budget = Budget.ofMs(12, { clock });
      try {
        const outcome = callUnary(method, {}, budget, { domain: 'd', random: () => r }).then(
          () => null,
          (e: unknown) => e,
        );
        await jest.advanceTimersByTimeAsync(10);
        expect(await outcome).toBeInstanceOf(CtxError);
        expect(calls()).toBe(want);
      } finally {
        budget.dispose();
        jest.useRealTimers();
      }
    }
  });

  it.each([
    ['INTERNAL, not retryable', status.INTERNAL, {}],
    ['UNAVAILABLE with retry: false', status.UNAVAILABLE, { retry: false }],
  ])('%s - one call, no draw', async (_title, code, extra) => {
    const { method, calls } = failing(code);
    const random = fixed(0);
    const budget = Budget.ofMs(10_000);
    try {
      await expect(callUnary(method, {}, budget, { domain: 'd', random, ...extra })).rejects.toBeInstanceOf(CtxError);
      expect(calls()).toBe(1);
      expect(random).not.toHaveBeenCalled();
    } finally {
      budget.dispose();
    }
  });
});
