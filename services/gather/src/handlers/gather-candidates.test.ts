import { DEFAULT_OTHER_PEER_PENALTIES } from '@ctxmesh/kernel';
import { penaltiesOf, quotasOf } from './gather-candidates';

describe('quotasOf', () => {
  it('is null in flat mode', () => {
    expect(quotasOf(false, [{ name: 'events', count: 3 }])).toBeNull();
  });

  it('keeps the wire order, ignores unknown names and floors counts at 0', () => {
    const q = quotasOf(true, [
      { name: 'skills', count: 2 },
      { name: 'events', count: -1 },
      { name: 'bogus', count: 5 },
      { name: 'resources', count: 1 },
    ]);
    expect(q).toEqual({ skills: 2, events: 0, resources: 1 });
    expect(Object.keys(q as object)).toEqual(['skills', 'events', 'resources']);
  });

  it('gives an empty bucketed map for no pairs (bucketed with no active bucket)', () => {
    expect(quotasOf(true, [])).toEqual({});
  });
});

describe('penaltiesOf', () => {
  it('starts from the defaults and overrides known categories with finite values', () => {
    expect(penaltiesOf([])).toEqual(DEFAULT_OTHER_PEER_PENALTIES);
    const p = penaltiesOf([
      { name: 'events', value: 0.5 },
      { name: 'unknown', value: 0.9 },
      { name: 'skills', value: Number.NaN },
    ]);
    expect(p).toEqual({ ...DEFAULT_OTHER_PEER_PENALTIES, events: 0.5 });
  });
});
