import { DomainError } from './errors';
import { parseTelemetry } from './telemetry';

describe('parseTelemetry', () => {
  it.each<[boolean | Record<string, unknown> | null | undefined, boolean]>([
    [undefined, false],
    [null, false],
    [false, false],
    [true, true],
    [{}, false],
    [{ summary: true }, true],
    [{ summary: false }, false],
    [{ summary: 'yes' }, true],
    [{ summary: 0 }, false],
  ])('%j → %p', (input, expected) => {
    expect(parseTelemetry(input)).toBe(expected);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ summary: false, events: true }, 'events'],
    [{ spans: 1, events: true }, 'events, spans'],
  ])('rejects unknown options in %j, naming them', (input, names) => {
    try {
      parseTelemetry(input);
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      const d = e as DomainError;
      expect([d.code, d.status]).toEqual(['INVALID_ARGUMENT', 400]);
      expect(d.message).toContain(names);
      // The plugins would mark the server legacy for 6 h on these words (plugin-client §1.3).
      expect(d.message.toLowerCase()).not.toMatch(/mode|extra|unexpected/);
    }
  });

  it('rejects a non-boolean summary', () => {
    expect(() => parseTelemetry({ summary: 'maybe' })).toThrow(DomainError);
  });
});
