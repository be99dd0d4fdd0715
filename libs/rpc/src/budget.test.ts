import { Budget } from './budget';
import { Code, CtxError } from './errors';

function fakeClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('Budget', () => {
  it('reports remaining time and affordability against its deadline', () => {
    const clock = fakeClock();
    const b = Budget.ofMs(100, { clock });
    expect(b.remainingMs()).toBe(100);
    expect(b.canAfford(100)).toBe(true);
    expect(b.canAfford(101)).toBe(false);
    clock.advance(60);
    expect(b.remainingMs()).toBe(40);
    clock.advance(100);
    expect(b.remainingMs()).toBe(0);
    expect(b.exhausted).toBe(true);
  });

  it('caps a child at min(parent − reserve, now + cap)', () => {
    const clock = fakeClock();
    const parent = Budget.ofMs(1000, { clock });
    expect(parent.child(200).remainingMs()).toBe(200);
    expect(parent.child(5000).remainingMs()).toBe(1000);
    expect(parent.child(5000, 150).remainingMs()).toBe(850);
    expect(parent.child(undefined, 300).remainingMs()).toBe(700);
  });

  it('turns into grpc-js options with an absolute deadline', () => {
    const clock = fakeClock();
    const opts = Budget.ofMs(250, { clock }).grpc();
    expect(opts.deadline).toEqual(new Date(1_000_250));
    expect(opts.parent).toBeUndefined();
  });

  it('clamps a timeout header to the max and defaults when absent or junk', () => {
    const clock = fakeClock();
    const o = { defaultMs: 3000, maxMs: 10_000, clock };
    expect(Budget.fromTimeoutHeader('500', o).remainingMs()).toBe(500);
    expect(Budget.fromTimeoutHeader('99999', o).remainingMs()).toBe(10_000);
    expect(Budget.fromTimeoutHeader(undefined, o).remainingMs()).toBe(3000);
    expect(Budget.fromTimeoutHeader('abc', o).remainingMs()).toBe(3000);
  });

  it('throws DEADLINE_EXCEEDED when spent and CANCELLED when a linked signal aborts', () => {
    const clock = fakeClock();
    const spent = Budget.ofMs(10, { clock });
    clock.advance(11);
    expect(() => spent.throwIfExhausted()).toThrow(expect.objectContaining({ code: Code.DEADLINE_EXCEEDED }));

    const ac = new AbortController();
    const b = Budget.ofMs(1000, { clock, signals: [ac.signal] });
    expect(() => b.throwIfExhausted()).not.toThrow();
    ac.abort(new CtxError(Code.CANCELLED, 'CANCELLED', 'client went away'));
    expect(b.exhausted).toBe(true);
    expect(() => b.throwIfExhausted()).toThrow(expect.objectContaining({ code: Code.CANCELLED }));
    expect(b.child(100).exhausted).toBe(true);
  });

  it('fires its signal when the real deadline passes', async () => {
    const b = Budget.ofMs(30);
    const reason = await new Promise<unknown>((resolve) => b.signal.addEventListener('abort', () => resolve(b.signal.reason)));
    expect(reason).toBeInstanceOf(CtxError);
    expect((reason as CtxError).code).toBe(Code.DEADLINE_EXCEEDED);
    b.dispose();
  });

  it('gives NATS a relative timeout of at least 1 ms', () => {
    const clock = fakeClock();
    const b = Budget.ofMs(1234, { clock });
    expect(b.natsTimeoutMs()).toBe(1234);
    clock.advance(5000);
    expect(b.natsTimeoutMs()).toBe(1);
  });
});
