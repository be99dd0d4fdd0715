/**
 * Context-contract §2–§3 through the HTTP API of the whole mesh: flat vs bucketed gathering,
 * quotas and purpose presets, limit/node_limit, categories from the owning bucket, origins and
 * peer scope, other-peer penalties, compensating rows for exclusions, directory sidecars,
 * profile.md, the origin tie-break, image_url and the live filters. Each scenario has its own
 * account and user, so the corpus of a row is exactly what the row seeded.
 */
import { startContractMesh, freshWho, context, rootOf, search, write, writeAll, writeSidecar, type ContextJson, type ContractMesh, type EntryJson, type Who } from './harness';
import { violations } from './oracle';

jest.setTimeout(60_000);

let cm: ContractMesh;

/** §2.4 default other-peer penalties. */
const DEFAULT_PENALTIES: Record<string, number> = { events: 0.1, entities: 0.1, preferences: 0.02, experiences: 0.02, resources: 0.02, skills: 0.02, memories: 0.1 };
const ORIGIN_RANK: Record<string, number> = { actor_peer: 2, self: 1, other_peer: 0 };

// ---------------------------------------------------------------------------------------------
// Scenarios (seeded once in beforeAll).

/** G: one user's memories of every kind, resources, skills and two profile.md files. */
const G = freshWho('g');
const g = rootOf(G);
const G_DOCS: Array<[string, string, string]> = [
  // [uri, content, expected flat-mode category (§2.3)]
  [`${g}/memories/events/e1.md`, '# Summary\nOrchard harvest festival planned.\n\n# ChatLog\nWe talked about the orchard harvest.', 'events'],
  [`${g}/memories/events/e2.md`, '# Summary\nOrchard irrigation fixed.\n\n# ChatLog\nirrigation details for the orchard', 'events'],
  [`${g}/memories/events/e3.md`, '# Summary\nBought orchard ladders.\n\n# ChatLog\nladders for the orchard', 'events'],
  [`${g}/memories/entities/ent1.md`, 'Orchard: the family apple orchard in Kent.', 'entities'],
  [`${g}/memories/entities/ent2.md`, 'Kent orchard cooperative, a buyer of apples.', 'entities'],
  [`${g}/memories/entities/ent3.md`, 'Ladder brand used in the orchard: TallPick.', 'entities'],
  [`${g}/memories/preferences/pref1.md`, 'Prefers organic orchard sprays.', 'preferences'],
  [`${g}/memories/preferences/pref2.md`, 'Prefers morning orchard walks.', 'preferences'],
  [`${g}/memories/experiences/exp1.md`, 'Pruning the orchard in winter worked well.', 'experiences'],
  [`${g}/memories/trajectories/t1.md`, 'Trajectory: orchard planning steps taken.', 'memories'],
  [`${g}/memories/identity.md`, 'Identity: an orchard keeper.', 'memories'],
  [`viking://resources/g/guide.md`, '# Orchard guide\nHow to run an orchard well.', 'resources'],
  [`viking://resources/g/backup/memories/events/log.md`, 'Backup of an orchard event log.', 'resources'],
  [`${g}/resources/notes.md`, 'Personal orchard notes.', 'resources'],
  [`${g}/skills/prune.md`, 'Skill: prune orchard trees safely.', 'skills'],
  [`viking://agent/skills/g-harvest.md`, 'Skill: harvest an orchard quickly.', 'skills'],
];
/** profile.md nodes (§2.3: dropped wherever they are), deliberately without the query word. */
const G_PROFILES: Array<[string, string]> = [
  [`${g}/memories/profile.md`, 'Profile: likes green tea and quiet mornings.'],
  [`viking://resources/g/profile.md`, 'Profile page: green tea enthusiast.'],
];

/** P: own memory, an actor peer (ann) and another peer (bob), with peer resources. */
const P = freshWho('p');
const p = rootOf(P);
const P_DOCS: Array<[string, string]> = [
  [`${p}/memories/events/mine.md`, '# Summary\nMango tasting with the team.\n\n# Log\nmango notes'],
  [`${p}/peers/ann/memories/events/ann.md`, '# Summary\nAnn made a mango smoothie.\n\n# Log\nmango mango'],
  [`${p}/peers/bob/memories/events/bob.md`, '# Summary\nBob mango mango mango farm.\n\n# Log\nmango mango mango'],
  [`${p}/peers/bob/memories/entities/bobent.md`, "Mango cultivar Alphonso, Bob's favourite mango."],
  [`${p}/peers/bob/resources/bobres.md`, "Bob's mango recipe resource."],
  [`${p}/peers/ann/resources/annres.md`, "Ann's mango resource page."],
];

/**
 * T: three events with one identical long body (equal scores, bodies too long for any tier
 * but `uri` at the budget used, so body dedup cannot merge them).
 */
const T = freshWho('t');
const t = rootOf(T);
const LONG_TIE = `Papaya ${'papaya seedlings need warm soil and steady water, '.repeat(12)}`.trim();
const T_DOCS: Array<[string, string]> = [
  [`${t}/memories/events/tie.md`, LONG_TIE],
  [`${t}/peers/ann/memories/events/tie.md`, LONG_TIE],
  [`${t}/peers/bob/memories/events/tie.md`, LONG_TIE],
];

/** T2: another peer's event and an own entity with one identical body, in two buckets. */
const T2 = freshWho('tt');
const t2 = rootOf(T2);
const T2_BODY = '# Summary\nGuava notes.\n\n# Details\nGuava trees fruit twice a year in warm places.';
const T2_DOCS: Array<[string, string]> = [
  [`${t2}/peers/bob/memories/events/guava.md`, T2_BODY],
  [`${t2}/memories/entities/guava.md`, T2_BODY],
];

/** X: resources for exclusions and compensating rows, plus one event. */
const X = freshWho('x');
const x = rootOf(X);
const X_DOCS: Array<[string, string]> = [
  ...[1, 2, 3, 4, 5, 6].map((i): [string, string] => [`viking://resources/x/k${i}.md`, `Kumquat note ${i}: ${'kumquat '.repeat(7 - i)}jam and marmalade ${i}.`]),
  [`${x}/memories/events/kq.md`, '# Summary\nKumquat jam day.\n\n# Log\nkumquat'],
];

/** D: a directory with both sidecars and one file inside. */
const D = freshWho('d');
const DIR = 'viking://resources/d/guide';
const DIR_OVERVIEW_BODY = 'The nectarine grove guide covers planting.\n\n## Sections\n- planting';

/** R: a resource outside {user}/resources (dev mode is role root). */
const R = freshWho('r');
const R_NOTE = `${rootOf(R)}/notes/plan.md`;
const R_DOCS: Array<[string, string]> = [
  [R_NOTE, 'Rhubarb planting plan, a note outside resources/.'],
  [`${rootOf(R)}/resources/rhubarb.md`, 'Rhubarb resource of the user.'],
  ['viking://resources/r/rhubarb.md', 'Account-wide rhubarb guide.'],
];

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  cm = await startContractMesh();
  await Promise.all([
    writeAll(cm, G, [...G_DOCS.map(([u, c]) => [u, c] as const), ...G_PROFILES]),
    writeAll(cm, P, P_DOCS),
    writeAll(cm, T, T_DOCS),
    writeAll(cm, T2, T2_DOCS),
    writeAll(cm, X, X_DOCS),
    writeAll(cm, R, R_DOCS),
    (async () => {
      await writeSidecar(cm, D, `${DIR}/.abstract.md`, 'Guide to the nectarine grove.');
      await writeSidecar(cm, D, `${DIR}/.overview.md`, `---\ndirectory: guide\ntitle: Guide\n---\n\n${DIR_OVERVIEW_BODY}\n`);
      await write(cm, D, `${DIR}/planting.md`, '# Planting nectarines\nDig a nectarine hole in spring.');
    })(),
    write(cm, G, `viking://resources/g/tagged.md`, 'Orchard budget spreadsheet, tagged.', { tags: ['team=search'] }),
  ]);
}, 120_000);

afterAll(async () => {
  await cm?.stop();
});

/** Count of entries per category. */
function byCategory(entries: readonly EntryJson[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) out[e.category] = (out[e.category] ?? 0) + 1;
  return out;
}

/** A context request that must succeed and satisfy every §5–§6 invariant. */
async function ask(who: Who, body: Record<string, unknown>): Promise<ContextJson> {
  const r = await context(cm, who, body);
  expect(violations(r, (body.tokenizer as string | undefined) ?? 'estimate')).toEqual([]);
  return r;
}

/** §3.6: entries are in descending (score − other-peer penalty, origin rank) order. */
function expectRankOrder(entries: readonly EntryJson[], penalties: Record<string, number>): void {
  const key = (e: EntryJson) => [e.origin === 'other_peer' ? e.score - penalties[e.category] : e.score, ORIGIN_RANK[e.origin]];
  for (let i = 1; i < entries.length; i++) {
    const [a, ra] = key(entries[i - 1]);
    const [b, rb] = key(entries[i]);
    expect(a > b || (a === b && ra >= rb)).toBe(true);
  }
}

interface Row {
  title: string;
  run: () => Promise<void>;
}

const rows: Row[] = [
  // §3.1 / §3.2 flat mode ----------------------------------------------------------------------
  {
    title: '§3.1/§3.2 no quotas and no purpose is flat mode: quotas null, searched {all}, profile.md hits counted in searched but never candidates',
    run: async () => {
      const r = await ask(G, { query: 'orchard', limit: 30 });
      expect(r.stats.quotas).toBeNull();
      expect(r.stats.purpose).toBeNull();
      expect(r.stats.searched).toEqual({ all: G_DOCS.length + G_PROFILES.length + 1 });
      expect(r.stats.candidates).toBe(G_DOCS.length + 1);
      expect(r.stats.excluded).toBe(0);
    },
  },
  {
    title: '§3.2 limit caps flat candidates (default 10)',
    run: async () => {
      expect((await ask(G, { query: 'orchard' })).stats.candidates).toBe(10);
      expect((await ask(G, { query: 'orchard', limit: 4 })).stats.candidates).toBe(4);
    },
  },
  {
    title: '§1.2/§3.2 node_limit replaces limit',
    run: async () => {
      const r = await ask(G, { query: 'orchard', limit: 8, node_limit: 3 });
      expect(r.stats.candidates).toBe(3);
      expect(r.stats.ignored).toBeUndefined();
    },
  },
  {
    title: '§3.2 limit 0 keeps nothing: no entries, rendered ""',
    run: async () => {
      const r = await ask(G, { query: 'orchard', limit: 0 });
      expect(r.entries).toEqual([]);
      expect(r.rendered).toBe('');
      expect(r.stats.candidates).toBe(0);
      expect(r.stats.used_tokens).toBe(0);
    },
  },
  {
    title: '§2.3 flat categories: list first (resources/skills), then the segment after /memories/, bucket-first for resources/…/memories/events',
    run: async () => {
      const r = await ask(G, { query: 'orchard', limit: 30 });
      const got = Object.fromEntries(r.entries.map((e) => [e.uri, e.category]));
      const want = Object.fromEntries(G_DOCS.map(([u, , c]) => [u, c]));
      want['viking://resources/g/tagged.md'] = 'resources';
      expect(got).toEqual(want);
    },
  },
  {
    title: '§2.3/§3.5 profile.md is dropped anywhere (memories and resources), even when it is the best match, and is not counted as excluded',
    run: async () => {
      const r = await ask(G, { query: 'profile green tea', limit: 30 });
      expect(r.stats.searched.all).toBe(G_DOCS.length + G_PROFILES.length + 1);
      expect(r.entries.some((e) => e.uri.endsWith('/profile.md'))).toBe(false);
      expect(r.stats.candidates).toBe(G_DOCS.length + 1);
      expect(r.stats.excluded).toBe(0);
      const b = await ask(G, { query: 'profile green tea', quotas: { resources: 5 } });
      expect(b.entries.some((e) => e.uri.endsWith('/profile.md'))).toBe(false);
      expect(b.stats.searched.resources).toBeGreaterThan(b.stats.candidates);
    },
  },

  // §3.1 / §3.3 bucketed mode -------------------------------------------------------------------
  {
    title: '§3.3 quotas are per-bucket ceilings; the owning bucket is the category; searched has one key per active bucket',
    run: async () => {
      const r = await ask(G, { query: 'orchard', quotas: { events: 2, entities: 1, resources: 2 } });
      expect(r.stats.quotas).toEqual({ events: 2, entities: 1, resources: 2 });
      expect(Object.keys(r.stats.quotas)).toEqual(['events', 'entities', 'resources']);
      expect(Object.keys(r.stats.searched).sort()).toEqual(['entities', 'events', 'resources']);
      expect(byCategory(r.entries)).toEqual({ events: 2, entities: 1, resources: 2 });
      expect(r.stats.candidates).toBe(5);
    },
  },
  {
    title: '§3.1 purpose coding without quotas uses the coding preset (events 1, entities 2, preferences 1, experiences 1, resources 3, skills 2)',
    run: async () => {
      const r = await ask(G, { query: 'orchard', purpose: 'coding' });
      expect(Object.entries(r.stats.quotas)).toEqual([['events', 1], ['entities', 2], ['preferences', 1], ['experiences', 1], ['resources', 3], ['skills', 2]]);
      expect(r.stats.purpose).toBe('coding');
      expect(byCategory(r.entries)).toEqual({ events: 1, entities: 2, preferences: 1, experiences: 1, resources: 3, skills: 2 });
    },
  },
  {
    title: '§3.1 purpose chat without quotas uses the chat preset (events 3, entities 3, preferences 1, experiences 1, resources 1, skills 1)',
    run: async () => {
      const r = await ask(G, { query: 'orchard', purpose: 'chat' });
      expect(Object.entries(r.stats.quotas)).toEqual([['events', 3], ['entities', 3], ['preferences', 1], ['experiences', 1], ['resources', 1], ['skills', 1]]);
      expect(byCategory(r.entries)).toEqual({ events: 3, entities: 3, preferences: 1, experiences: 1, resources: 1, skills: 1 });
    },
  },
  {
    title: '§3.1 explicit quotas win over purpose (purpose still echoed)',
    run: async () => {
      const r = await ask(G, { query: 'orchard', purpose: 'chat', quotas: { skills: 1 } });
      expect(r.stats.quotas).toEqual({ skills: 1 });
      expect(r.stats.purpose).toBe('chat');
      expect(byCategory(r.entries)).toEqual({ skills: 1 });
    },
  },
  {
    title: '§3.1 quota values are max(0, int): zero and negative buckets are inactive and not searched',
    run: async () => {
      const r = await ask(G, { query: 'orchard', quotas: { events: -2, skills: 0, resources: 1 } });
      expect(Object.entries(r.stats.quotas)).toEqual([['events', 0], ['skills', 0], ['resources', 1]]);
      expect(Object.keys(r.stats.searched)).toEqual(['resources']);
      expect(byCategory(r.entries)).toEqual({ resources: 1 });
    },
  },
  {
    title: '§3.3 bucketed ignores limit/node_limit and reports them (with level) in stats.ignored, appended last',
    run: async () => {
      const r = await ask(G, { query: 'orchard', quotas: { entities: 3 }, limit: 1 });
      expect(r.stats.candidates).toBe(3);
      expect(r.stats.ignored).toEqual(['limit']);
      const n = await ask(G, { query: 'orchard', quotas: { entities: 3 }, node_limit: 1, level: [0, 2] });
      expect(n.stats.candidates).toBe(3);
      expect(n.stats.ignored).toEqual(['level', 'limit']);
      expect(Object.keys(n.stats).at(-1)).toBe('ignored');
      const f = await ask(G, { query: 'orchard', level: 2, limit: 2 });
      expect(f.stats.ignored).toEqual(['level']);
      expect(f.stats.candidates).toBe(2);
    },
  },
  {
    title: '§3.3 quotas {} is bucketed with no bucket: no retrieval call, so even a blank query answers 200 with nothing',
    run: async () => {
      const r = await ask(G, { query: '', quotas: {} });
      expect(r.entries).toEqual([]);
      expect(r.stats.quotas).toEqual({});
      expect(r.stats.searched).toEqual({});
      expect(r.stats.per_entry_cap).toBe(3200);
    },
  },
  {
    title: '§2.3 bucketed: the bucket that retrieved a hit is its category (resources/…/memories/events/log.md stays resources)',
    run: async () => {
      const r = await ask(G, { query: 'orchard event log backup', quotas: { resources: 5, events: 3 } });
      const log = r.entries.find((e) => e.uri === 'viking://resources/g/backup/memories/events/log.md');
      expect(log?.category).toBe('resources');
      for (const e of r.entries) expect(e.category).toBe(e.uri.includes(`${g}/memories/events/`) ? 'events' : 'resources');
    },
  },
  {
    title: '§3.3 memory buckets search only {user}/memories/<bucket>: catch-all memory types never enter a bucket',
    run: async () => {
      const r = await ask(G, { query: 'orchard trajectory identity', quotas: { events: 5, entities: 5, preferences: 5, experiences: 5 } });
      expect(r.entries.some((e) => e.uri.includes('/trajectories/') || e.uri.endsWith('/identity.md'))).toBe(false);
      expect(byCategory(r.entries)).toEqual({ events: 3, entities: 3, preferences: 2, experiences: 1 });
    },
  },

  {
    title: '§3.3 root role (dev mode): the resources bucket searches {user}/resources and viking://resources only; flat mode still finds the rest',
    run: async () => {
      const b = await ask(R, { query: 'rhubarb', quotas: { resources: 10 } });
      expect(b.entries.map((e) => e.uri).sort()).toEqual(['viking://resources/r/rhubarb.md', `${rootOf(R)}/resources/rhubarb.md`]);
      const flat = await ask(R, { query: 'rhubarb' });
      expect(flat.entries.find((e) => e.uri === R_NOTE)?.category).toBe('resources');
    },
  },

  // §2.4 origins, peer scope, penalties -----------------------------------------------------------
  {
    title: '§2.4 origins with an actor peer (peer_scope all): own = self, the actor peer = actor_peer, other peers = other_peer; peer scans take only memories',
    run: async () => {
      const r = await ask({ ...P, actorPeer: 'ann' }, { query: 'mango', limit: 20 });
      const got = Object.fromEntries(r.entries.map((e) => [e.uri, e.origin]));
      expect(got).toEqual({
        [`${p}/memories/events/mine.md`]: 'self',
        [`${p}/peers/ann/memories/events/ann.md`]: 'actor_peer',
        [`${p}/peers/ann/resources/annres.md`]: 'actor_peer',
        [`${p}/peers/bob/memories/events/bob.md`]: 'other_peer',
        [`${p}/peers/bob/memories/entities/bobent.md`]: 'other_peer',
      });
      expect(r.stats.origins).toEqual({ actor_peer: 2, self: 1, other_peer: 2 });
      expect(r.stats.peer_scope).toBe('all');
    },
  },
  {
    title: '§2.4 peer_scope actor: other peers are invisible, the actor peer stays',
    run: async () => {
      const r = await ask({ ...P, actorPeer: 'ann' }, { query: 'mango', limit: 20, peer_scope: 'actor' });
      expect(r.entries.map((e) => e.origin).sort()).toEqual(['actor_peer', 'actor_peer', 'self']);
      expect(r.stats.origins).toEqual({ actor_peer: 2, self: 1, other_peer: 0 });
      expect(r.stats.peer_scope).toBe('actor');
    },
  },
  {
    title: '§2.4 without an actor peer every peer is other_peer (memories only, through the peer scan)',
    run: async () => {
      const r = await ask(P, { query: 'mango', limit: 20 });
      const got = Object.fromEntries(r.entries.map((e) => [e.uri, e.origin]));
      expect(got).toEqual({
        [`${p}/memories/events/mine.md`]: 'self',
        [`${p}/peers/ann/memories/events/ann.md`]: 'other_peer',
        [`${p}/peers/bob/memories/events/bob.md`]: 'other_peer',
        [`${p}/peers/bob/memories/entities/bobent.md`]: 'other_peer',
      });
      const actorOnly = await ask(P, { query: 'mango', limit: 20, peer_scope: 'actor' });
      expect(actorOnly.entries.map((e) => e.uri)).toEqual([`${p}/memories/events/mine.md`]);
    },
  },
  {
    title: '§3.3 bucketed peers: memory buckets target the actor peer too, and the scan adds other peers of that bucket only',
    run: async () => {
      const r = await ask({ ...P, actorPeer: 'ann' }, { query: 'mango', quotas: { events: 5 } });
      expect(Object.fromEntries(r.entries.map((e) => [e.uri, e.origin]))).toEqual({
        [`${p}/memories/events/mine.md`]: 'self',
        [`${p}/peers/ann/memories/events/ann.md`]: 'actor_peer',
        [`${p}/peers/bob/memories/events/bob.md`]: 'other_peer',
      });
      const scoped = await ask({ ...P, actorPeer: 'ann' }, { query: 'mango', quotas: { events: 5 }, peer_scope: 'actor' });
      expect(scoped.entries.map((e) => e.origin).sort()).toEqual(['actor_peer', 'self']);
    },
  },
  {
    title: '§2.4/§3.6 the other-peer penalty only ranks: other peers sink with penalty 1, the reported score stays raw',
    run: async () => {
      const who = { ...P, actorPeer: 'ann' };
      const none = await ask(who, { query: 'mango', limit: 20, other_peer_penalty: 0 });
      const full = await ask(who, { query: 'mango', limit: 20, other_peer_penalty: 1 });
      expectRankOrder(none.entries, Object.fromEntries(Object.keys(DEFAULT_PENALTIES).map((k) => [k, 0])));
      const origins = full.entries.map((e) => e.origin);
      expect(origins.slice(-2)).toEqual(['other_peer', 'other_peer']);
      expect(origins.slice(0, -2)).not.toContain('other_peer');
      const scores = (r: ContextJson) => Object.fromEntries(r.entries.map((e) => [e.uri, e.score]));
      expect(scores(full)).toEqual(scores(none));
      // One of bob's memories matches best on raw score: without a penalty it leads.
      expect(none.entries[0].uri.startsWith(`${p}/peers/bob/memories/`)).toBe(true);
      expect(none.entries[0].score).toBe(Math.max(...none.entries.map((e) => e.score)));
    },
  },
  {
    title: '§2.4/§3.6 default penalties (events/entities/memories 0.1, others 0.02) decide the order of other peers',
    run: async () => {
      const r = await ask({ ...P, actorPeer: 'ann' }, { query: 'mango', limit: 20 });
      expect(r.stats.other_peer_penalties).toEqual(DEFAULT_PENALTIES);
      expectRankOrder(r.entries, DEFAULT_PENALTIES);
    },
  },
  {
    title: '§2.4 penalty resolution: a number applies to all seven, an object overrides known keys, values clamp to [0, 1], unknown keys are ignored',
    run: async () => {
      const num = await ask(P, { query: 'mango', other_peer_penalty: 0.3 });
      expect(num.stats.other_peer_penalties).toEqual(Object.fromEntries(Object.keys(DEFAULT_PENALTIES).map((k) => [k, 0.3])));
      const big = await ask(P, { query: 'mango', other_peer_penalty: 5 });
      expect(Object.values(big.stats.other_peer_penalties)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      const obj = await ask(P, { query: 'mango', other_peer_penalty: { events: 0.5, entities: -1, skills: 7, bogus: 0.9 } });
      expect(Object.entries(obj.stats.other_peer_penalties)).toEqual([
        ['events', 0.5],
        ['entities', 0],
        ['preferences', 0.02],
        ['experiences', 0.02],
        ['resources', 0.02],
        ['skills', 1],
        ['memories', 0.1],
      ]);
    },
  },

  // §3.6 sort ---------------------------------------------------------------------------------
  {
    title: '§3.6 flat: equal ranked scores order actor_peer > self > other_peer (self arrives first, other peers last)',
    run: async () => {
      const r = await ask({ ...T, actorPeer: 'ann' }, { query: 'papaya seedlings', other_peer_penalty: 0, max_tokens: 120 });
      expect(new Set(r.entries.map((e) => e.score)).size).toBe(1);
      expect(r.entries.map((e) => e.detail)).toEqual(['uri', 'uri', 'uri']);
      expect(r.entries.map((e) => e.origin)).toEqual(['actor_peer', 'self', 'other_peer']);
    },
  },
  {
    title: '§3.6 bucketed: equal ranked scores order actor_peer > self > other_peer within a bucket',
    run: async () => {
      const r = await ask({ ...T, actorPeer: 'ann' }, { query: 'papaya seedlings', other_peer_penalty: 0, max_tokens: 120, quotas: { events: 3 } });
      expect(new Set(r.entries.map((e) => e.score)).size).toBe(1);
      expect(r.entries.map((e) => e.origin)).toEqual(['actor_peer', 'self', 'other_peer']);
    },
  },
  {
    title: '§3.6 the global sort after merging buckets puts self above an equally ranked other peer from an earlier bucket',
    run: async () => {
      const r = await ask(T2, {
        query: 'guava trees',
        other_peer_penalty: 0,
        quotas: { events: 1, entities: 1 },
        detail: { events: 'overview', entities: 'abstract' },
      });
      expect(r.entries.map((e) => e.uri)).toEqual([`${t2}/memories/entities/guava.md`, `${t2}/peers/bob/memories/events/guava.md`]);
      expect(r.entries[0].score).toBe(r.entries[1].score);
    },
  },

  // §3.1 exclusions and compensating rows --------------------------------------------------------
  {
    title: '§3.1 compensating rows (flat): excluding the top hits still fills limit from the next ones; excluded counts occurrences',
    run: async () => {
      const top = await ask(X, { query: 'kumquat', limit: 2 });
      const excluded = top.entries.map((e) => e.uri);
      expect(excluded).toHaveLength(2);
      const r = await ask(X, { query: 'kumquat', limit: 2, exclude_uris: excluded });
      expect(r.stats.candidates).toBe(2);
      expect(r.entries.some((e) => excluded.includes(e.uri))).toBe(false);
      expect(r.stats.excluded).toBe(2);
    },
  },
  {
    title: '§3.1 compensating rows (bucketed): a bucket whose top page is excluded falls through to the next hits',
    run: async () => {
      const top = await ask(X, { query: 'kumquat', quotas: { resources: 2 } });
      const excluded = top.entries.map((e) => e.uri);
      expect(excluded).toHaveLength(2);
      const r = await ask(X, { query: 'kumquat', quotas: { resources: 2 }, exclude_uris: excluded });
      expect(byCategory(r.entries)).toEqual({ resources: 2 });
      expect(r.entries.some((e) => excluded.includes(e.uri))).toBe(false);
      expect(r.stats.excluded).toBe(2);
    },
  },
  {
    title: '§3.1/§7 exclude_uris entries are trimmed and ~-expanded before matching',
    run: async () => {
      const r = await ask(X, { query: 'kumquat jam day', limit: 10, exclude_uris: ['  viking://~/memories/events/kq.md  '] });
      expect(r.entries.some((e) => e.uri === `${x}/memories/events/kq.md`)).toBe(false);
      expect(r.stats.excluded).toBe(1);
    },
  },
  {
    title: '§3.5 an excluded directory node excludes both of its sidecar hits',
    run: async () => {
      const r = await ask(D, { query: 'nectarine grove guide', limit: 10, exclude_uris: [DIR] });
      expect(r.entries.map((e) => e.uri)).toEqual([`${DIR}/planting.md`]);
      expect(r.stats.excluded).toBe(2);
    },
  },

  // §3.5 directory sidecars ---------------------------------------------------------------------
  {
    title: '§3.5 flat: sidecar hits become their directory node (never the sidecar URI); both count as candidates and body dedup collapses them',
    run: async () => {
      const r = await ask(D, { query: 'nectarine grove guide', limit: 10 });
      expect(r.entries.some((e) => /\/\.(abstract|overview)\.md$/.test(e.uri))).toBe(false);
      const dir = r.entries.find((e) => e.uri === DIR);
      expect(dir).toMatchObject({ category: 'resources', detail: 'overview', text: DIR_OVERVIEW_BODY, origin: 'self' });
      expect(r.stats.searched).toEqual({ all: 3 });
      expect(r.stats.candidates).toBe(3);
      expect(r.stats.deduped).toBe(1);
      expect(r.entries).toHaveLength(2);
    },
  },
  {
    title: '§3.3 bucketed: a directory\'s two sidecar hits merge into one candidate by node URI',
    run: async () => {
      const r = await ask(D, { query: 'nectarine grove guide', quotas: { resources: 5 } });
      expect(r.entries.filter((e) => e.uri === DIR)).toHaveLength(1);
      expect(r.stats.candidates).toBe(2);
      expect(r.stats.deduped).toBe(0);
    },
  },

  // §3.7 image_url ----------------------------------------------------------------------------
  {
    title: '§3.7 image_url with a text query is forwarded and the text is searched (same answer as text only)',
    run: async () => {
      const plain = await ask(G, { query: 'orchard', limit: 5 });
      const withImage = await ask(G, { query: 'orchard', limit: 5, image_url: 'https://example.com/apple.png' });
      expect(withImage.entries).toEqual(plain.entries);
      const bucketed = await ask(G, { query: 'orchard', quotas: { skills: 1 }, image_url: 'data:image/png;base64,iVBORw0KGgo=' });
      expect(byCategory(bucketed.entries)).toEqual({ skills: 1 });
    },
  },
  {
    title: '§1.7/§3.7 an image-only query is rejected on every retrieval path (flat, peer-scope actor, a bucket) with 400 INVALID_ARGUMENT',
    run: async () => {
      for (const extra of [{}, { peer_scope: 'actor' }, { quotas: { skills: 1 } }]) {
        const res = await search(cm, G, { mode: 'context', query: '  ', image_url: 'https://example.com/apple.png', ...extra });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ status: 'error', result: null, error: { code: 'INVALID_ARGUMENT', message: expect.stringContaining('image'), details: {} }, telemetry: null, profile: null });
      }
      const none = await search(cm, G, { mode: 'context', query: '', image_url: 'https://example.com/apple.png', quotas: {} });
      expect(none.status).toBe(200);
    },
  },
  {
    title: '§1.7/§3.7 a malformed viking:// image_url is INVALID_URI, another scheme INVALID_ARGUMENT',
    run: async () => {
      const bad = await search(cm, G, { mode: 'context', query: 'orchard', image_url: 'viking://nowhere/x.png' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('INVALID_URI');
      const ftp = await search(cm, G, { mode: 'context', query: 'orchard', image_url: 'ftp://example.com/x.png' });
      expect(ftp.status).toBe(400);
      expect(ftp.body.error).toEqual({ code: 'INVALID_ARGUMENT', message: 'image_url must be a data:image base64 URI, http(s) URL, or viking:// URI.', details: {} });
    },
  },

  // §1.3/§1.8 live filters in context mode -------------------------------------------------------
  {
    title: '§1.3/§1.8 context_type filters context mode (memory / resource / skill, comma-separated, case-insensitive)',
    run: async () => {
      const skills = await ask(G, { query: 'orchard', limit: 30, context_type: 'SKILL' });
      expect(byCategory(skills.entries)).toEqual({ skills: 2 });
      const both = await ask(G, { query: 'orchard', limit: 30, context_type: 'memory, resource' });
      expect(both.entries.some((e) => e.category === 'skills')).toBe(false);
      expect(both.entries.length).toBe(G_DOCS.length - 2 + 1);
    },
  },
  {
    title: '§1.3/§1.8 tags filter context mode (normalised k=v)',
    run: async () => {
      const r = await ask(G, { query: 'orchard', limit: 30, tags: [' Team=Search '] });
      expect(r.entries.map((e) => e.uri)).toEqual(['viking://resources/g/tagged.md']);
    },
  },
  {
    title: '§1.3/§2.4 score_threshold is applied by retrieval to raw scores and echoed in stats',
    run: async () => {
      const all = await ask(G, { query: 'orchard harvest festival', limit: 30 });
      const threshold = all.entries[Math.floor(all.entries.length / 2)].score;
      expect(all.entries.at(-1)!.score).toBeLessThan(threshold);
      const r = await ask(G, { query: 'orchard harvest festival', limit: 30, score_threshold: threshold });
      expect(r.stats.score_threshold).toBe(threshold);
      expect(r.entries.length).toBeGreaterThan(0);
      expect(r.entries.length).toBeLessThan(all.entries.length);
      for (const e of r.entries) expect(e.score).toBeGreaterThanOrEqual(threshold);
    },
  },
];

describe('context mode through HTTP: gathering (§2–§3)', () => {
  it.each(rows)('$title', async ({ run }) => {
    await run();
  });
});
