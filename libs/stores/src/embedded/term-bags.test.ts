import { encodeTermCounts } from '../ranking/terms';
import type { Statements } from './statements';
import { BAG_MEMO_BYTES, TermBags, bagBytes } from './term-bags';

/** Statements that serve `vi_bags` rows of `chars` characters each and count the rows read. */
function fakeStatements(chars: number): { st: Statements; read: () => number; length: number } {
  let read = 0;
  // Filler terms shared by every row, so that each row's string is about `chars` long.
  const filler = new Map<string, number>();
  for (let i = 0; filler.size * 10 < chars; i++) filler.set(`f${i}`, 1 + (i % 3));
  const fill = encodeTermCounts({ main: filler, minor: new Map() }).slice(0, -1);
  const terms = (id: number): string => `t${id} 1 ${fill}\t`;
  const st = {
    bagsByIds: {
      all: (json: string) => {
        const ids = JSON.parse(json) as number[];
        read += ids.length;
        return ids.map((id) => ({ id, terms: terms(id), lexical_text: null, abstract: null, body: null, title: null }));
      },
    },
  } as unknown as Statements;
  return { st, read: () => read, length: terms(1).length };
}

describe('TermBags', () => {
  it('keeps the hot set of a 10,000-document tree in memory: 20,000 rows of a kilobyte are read from the file once', () => {
    // Regression: the memo was bounded at 4,096 rows, so a ranked search over a real-shaped tree
    // (52,000 rows, up to 720 candidates a search) read most of its candidates' terms again.
    const { st, read } = fakeStatements(1000);
    const bags = new TermBags(st, 0.5);
    const ids = Array.from({ length: 20_000 }, (_, i) => i + 1);
    for (let at = 0; at < ids.length; at += 500) bags.get(ids.slice(at, at + 500));
    expect(read()).toBe(20_000);
    for (let at = 0; at < ids.length; at += 500) {
      const got = bags.get(ids.slice(at, at + 500));
      expect(got.size).toBe(500);
    }
    expect(read()).toBe(20_000);
    expect(bags.get([7]).get(7)?.count(0, 't7')).toBe(1);
  });

  it('bounds the memo by bytes: large bags are evicted, least recently used first', () => {
    const chars = 1 << 20;
    const { st, read, length } = fakeStatements(chars);
    const bags = new TermBags(st, 0.5);
    const fits = Math.floor(BAG_MEMO_BYTES / bagBytes(length));
    expect(fits).toBeGreaterThan(4);
    const ids = Array.from({ length: fits + 1 }, (_, i) => i + 1);
    for (const id of ids) bags.get([id]);
    expect(read()).toBe(ids.length);
    // The most recent rows are still held; the first ones were evicted and are read again.
    bags.get([ids.at(-1)!]);
    expect(read()).toBe(ids.length);
    bags.get([ids[0]!]);
    expect(read()).toBe(ids.length + 1);
  });
});
