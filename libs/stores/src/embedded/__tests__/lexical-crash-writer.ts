/**
 * The child process of the lexical index's crash-consistency test (`lexical-crash.test.ts`):
 * on an index file, adds rows in small transactions, removes some, and steps the tail's merge a
 * few terms at a time, until it is killed (or after `MAX_OPS` operations). Before each write it
 * prints `try add|del <ids>`, and once the transaction has committed `ack add|del <ids>`;
 * stdout is written synchronously, so an acknowledged write is a committed one.
 *
 *   node run-ts.cjs lexical-crash-writer.ts <file> <seed> <first new id> <live ids, comma-separated>
 */
import { writeSync } from 'node:fs';
import { openEmbeddedDb } from '../db';
import { LexicalIndex } from '../lexical-index';
import { rng, rowOf } from './lexical-crash-rows';

/** The writer stops by itself after this many operations (a parent that never kills it). */
const MAX_OPS = 20_000;

const [file, seedArg, firstArg, liveArg] = process.argv.slice(2);
const seed = Number(seedArg);
let next = Number(firstArg);
const live = liveArg ? liveArg.split(',').map(Number) : [];
const db = openEmbeddedDb(file!);
const lex = new LexicalIndex(db);
const r = rng(seed * 7919 + next);
const say = (line: string) => writeSync(1, `${line}\n`);

say('ready');
for (let op = 0; op < MAX_OPS; op++) {
  const x = r();
  if (x < 0.4) {
    const ids = Array.from({ length: 1 + Math.floor(r() * 6) }, () => next++);
    say(`try add ${ids.join(',')}`);
    db.transaction(() => lex.add(ids.map((id) => rowOf(seed, id)))).immediate();
    say(`ack add ${ids.join(',')}`);
    live.push(...ids);
  } else if (x < 0.55 && live.length > 0) {
    const ids = [...new Set(Array.from({ length: 1 + Math.floor(r() * 3) }, () => live[Math.floor(r() * live.length)]!))];
    say(`try del ${ids.join(',')}`);
    db.transaction(() => lex.remove(ids.map((id) => rowOf(seed, id)))).immediate();
    say(`ack del ${ids.join(',')}`);
    for (const id of ids) live.splice(live.indexOf(id), 1);
  } else {
    // Mostly a few terms per step, so that a merge spans many steps and dies in any of its
    // phases; sometimes a whole merge, so that merges finish (and new ones start) too.
    lex.mergeStep({ budgetMs: 1000, maxWork: r() < 0.05 ? Infinity : 1 + Math.floor(r() * 3) });
  }
}
db.close();
