import { PackedBlobs } from './sync';

describe('PackedBlobs', () => {
  it('gives back every blob byte for byte across the growth of its buffer, and nothing after release', () => {
    const packed = new PackedBlobs();
    const blob = (id: number) => Buffer.from(Array.from({ length: 1 + (id % 700) }, (_, i) => (id * 31 + i) & 0xff));
    // Enough bytes that the buffer grows several times (from 64 KiB, doubling).
    for (let id = 1; id <= 3000; id++) packed.add(id * 7, blob(id));
    for (let id = 1; id <= 3000; id++) expect(packed.get(id * 7)?.equals(blob(id))).toBe(true);
    expect(packed.get(8)).toBeUndefined();
    // A blob re-added under its id reads as the last one.
    packed.add(7, Buffer.from([1, 2, 3]));
    expect([...packed.get(7)!]).toEqual([1, 2, 3]);
    packed.release();
    expect(packed.get(14)).toBeUndefined();
    // Usable again after release.
    packed.add(5, Buffer.from([9]));
    expect([...packed.get(5)!]).toEqual([9]);
  });

  it('holds an empty blob', () => {
    const packed = new PackedBlobs();
    packed.add(1, Buffer.alloc(0));
    expect(packed.get(1)?.length).toBe(0);
  });
});
