import type { LexicalRow } from '../lexical-index';

/** A deterministic PRNG (mulberry32): uniform in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The accounts rows are written to (by id parity). */
export const ACCOUNTS = ['a', 'b'] as const;

const COMMON = Array.from({ length: 24 }, (_, i) => `w${i}`);
const MINOR = [...'的一是不了人我在有他'];

/**
 * The terms of row `id` in a run of `seed`: common main terms (their postings are merged into
 * existing blocks), one term of its own (a term new to the index: a merge creates it) and a few
 * minor terms. Both processes derive a row from its id, so a removal names the terms it was
 * written with, as the store does.
 */
export function rowOf(seed: number, id: number): LexicalRow {
  const r = rng(seed * 1_000_003 + id);
  const main = new Map<string, number>();
  const n = 2 + Math.floor(r() * 5);
  for (let i = 0; i < n; i++) main.set(COMMON[Math.floor(r() * COMMON.length)]!, 1 + Math.floor(r() * 4));
  main.set(`u${id}`, 1);
  const minor = new Map<string, number>();
  const m = Math.floor(r() * 3);
  for (let i = 0; i < m; i++) minor.set(MINOR[Math.floor(r() * MINOR.length)]!, 1 + Math.floor(r() * 3));
  return { id, account: ACCOUNTS[id % 2]!, main, minor };
}
