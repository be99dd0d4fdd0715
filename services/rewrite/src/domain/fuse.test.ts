import { fuseMs, responseReserveMs } from './fuse';

describe('fuseMs', () => {
  it.each([
    // configured, requested, remaining → fuse
    [30_000, 0, 60_000, 30_000], // no timeout_ms: the service fuse
    [30_000, 2_000, 60_000, 2_000], // timeout_ms below the fuse wins
    [5_000, 20_000, 60_000, 5_000], // the service fuse caps a larger timeout_ms
    [30_000, 30_000, 1_000, 900], // the call's deadline wins, minus a tenth kept back
    [30_000, 30_000, 10_000, 9_750], // … at most 250 ms
    [30_000, 30_000, 200, 180], // a short deadline keeps a tenth back
    [30_000, 30_000, 5, 5], // a tenth of 5 ms rounds to no reserve
    [30_000, 30_000, 0, 0], // nothing left: no call
  ])('configured %i, requested %i, remaining %i → %i', (configured, requested, remaining, want) => {
    expect(fuseMs(configured, requested, remaining)).toBe(want);
  });
});

describe('responseReserveMs', () => {
  it('is a tenth of the remaining time, at most 250 ms and never negative', () => {
    expect(responseReserveMs(100)).toBe(10);
    expect(responseReserveMs(10_000)).toBe(250);
    expect(responseReserveMs(-5)).toBe(0);
  });
});
