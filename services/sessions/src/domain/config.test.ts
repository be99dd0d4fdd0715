import { ConfigError } from './errors';
import { resolveMaxOverflowRetries } from './config';
import { SessionLog } from './session-log';
import { newLog } from './__tests__/fixtures';

describe('resolveMaxOverflowRetries', () => {
  it('defaults to 1 when unset, including an explicit undefined', () => {
    expect(resolveMaxOverflowRetries(undefined)).toBe(1);
    expect(resolveMaxOverflowRetries(null)).toBe(1);
    expect(resolveMaxOverflowRetries('')).toBe(1);
  });

  it('accepts non-negative integers, 0 included', () => {
    expect(resolveMaxOverflowRetries(0)).toBe(0);
    expect(resolveMaxOverflowRetries(3)).toBe(3);
    expect(resolveMaxOverflowRetries('2')).toBe(2);
  });

  it.each([-1, 1.5, '1.5', 'abc', Number.NaN, Infinity, true, {}])('fails startup on %p', (v) => {
    expect(() => resolveMaxOverflowRetries(v)).toThrow(ConfigError);
    expect(() => resolveMaxOverflowRetries(v)).toThrow('maxOverflowRetries must be a non-negative integer');
  });
});

describe('SessionLog config', () => {
  it('validates maxOverflowRetries at construction and keeps the default for undefined', () => {
    const { store } = newLog();
    expect(() => new SessionLog({ store, maxOverflowRetries: -1 })).toThrow(ConfigError);
    expect(new SessionLog({ store, maxOverflowRetries: undefined }).maxOverflowRetries).toBe(1);
    expect(new SessionLog({ store }).maxOverflowRetries).toBe(1);
  });
});
