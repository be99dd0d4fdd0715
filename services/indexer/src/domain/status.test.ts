import { WriteStatusBook, type WriteRecord } from './status';

const applied: WriteRecord = { state: 'applied', contentHash: 'h', nodes: 2, reason: '', message: '' };
const failed: WriteRecord = { state: 'failed', contentHash: '', nodes: 0, reason: 'ALREADY_EXISTS', message: 'exists' };

describe('WriteStatusBook', () => {
  it('reports pending until a write settles, and never moves a settled write back to pending', () => {
    const book = new WriteStatusBook();
    book.pending('w1');
    expect(book.get('w1')?.state).toBe('pending');
    book.settle('w1', applied);
    book.pending('w1');
    expect(book.get('w1')).toEqual(applied);
    expect(book.get('nope')).toBeUndefined();
  });

  it('counts applied and failed writes, with or without an id', () => {
    const book = new WriteStatusBook();
    book.settle('a', applied);
    book.settle('', applied);
    book.settle('b', failed);
    expect([book.writesApplied, book.writesFailed]).toEqual([2, 1]);
    expect(book.get('')).toBeUndefined();
  });

  it('forgets the least recently written ids beyond its capacity', () => {
    const book = new WriteStatusBook(2);
    book.settle('a', applied);
    book.settle('b', applied);
    book.settle('a', failed);
    book.settle('c', applied);
    expect(book.get('b')).toBeUndefined();
    expect(book.get('a')).toEqual(failed);
    expect(book.get('c')).toEqual(applied);
  });
});
