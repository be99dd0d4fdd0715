/**
 * Context-contract §4 through the HTTP API of the whole mesh: the tier ladder, per-category
 * start tiers and ceilings, `detail` pins (scalar, per category, "auto"), abstract
 * substitutes, directories at overview, and overview extraction by source type (directory
 * sidecars with front matter, code skeletons, memory Summary sections, generic documents).
 * Every scenario has its own account and user, so a row's candidates are exactly its corpus.
 */
import { startContractMesh, freshWho, context, rootOf, send, headersFor, writeAll, writeSidecar, type ContextJson, type ContractMesh, type EntryJson, type Who } from './harness';
import { estimate, fragmentOf, violations } from './oracle';

jest.setTimeout(60_000);

let cm: ContractMesh;

// ---------------------------------------------------------------------------------------------
// Scenarios.

interface Scenario {
  who: Who;
  docs: Array<[string, string]>;
  sidecars?: Array<[string, string]>;
}

function scenario(tag: string, docs: (root: string) => Array<[string, string]>, sidecars?: (root: string) => Array<[string, string]>): Scenario {
  const who = freshWho(tag);
  return { who, docs: docs(rootOf(who)), sidecars: sidecars?.(rootOf(who)) };
}

const CHATTER = 'chatter '.repeat(60).trim();
const EVENT_BODY = `# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\n${CHATTER}`;
const MEMORY_FIELDS = '<!-- MEMORY_FIELDS {"kind": "event", "importance": 3} -->';

/** An event with a Summary section and a long chat log (plus the metadata comment). */
const EV = scenario('ev', (r) => [[`${r}/memories/events/2026/07/14/launch.md`, `${EVENT_BODY}\n${MEMORY_FIELDS}\n`]]);

/** One memory of each abstract-ceiling category, one with a metadata comment. */
const MEM = scenario('mem', (r) => [
  [`${r}/memories/entities/openviking.md`, `OpenViking: context database for AI agents.\n${MEMORY_FIELDS}`],
  [`${r}/memories/preferences/style.md`, 'Prefers TypeScript strict mode & <no> any.'],
  [`${r}/memories/experiences/retro.md`, 'Retro: shipping the proxy early worked.'],
  [`${r}/memories/trajectories/plan.md`, 'Trajectory: plan, build, ship the proxy.'],
]);

const GENERIC_DOC = '# Title\nIntro line one\nline two\n\n## Install\n\nRun it.\n### Deep\n#### Deeper\n';
const GENERIC_OVERVIEW = '# Title\n  ## Install\n    ### Deep\n\nIntro line one\nline two';
const MANY_HEADINGS = Array.from({ length: 30 }, (_, i) => `## Section ${i + 1}`).join('\n');
const LONG_PARAGRAPH = 'word '.repeat(100).trim();
const SKILL_BODY = '# Deploy skill\nRun the deploy script for the proxy.\n\n## Steps\n1. build\n2. ship';

/** Resources and a skill. */
const RES = scenario('res', (r) => [
  ['viking://resources/res/doc.md', GENERIC_DOC],
  ['viking://resources/res/many.md', `${MANY_HEADINGS}\n\n${LONG_PARAGRAPH}\n\nSecond paragraph.`],
  [`${r}/skills/deploy.md`, SKILL_BODY],
]);

const PY = 'import os\n\nclass Greeter:\n    def hello(self, name):\n        return "hi " + name\n\ndef main():\n    print(Greeter().hello("x"))\n';
const TS = 'export function add(a: number, b: number): number {\n  return a + b;\n}\nexport class Box {\n  open(): void {}\n}\n';
/** Code files. */
const CODE = scenario('code', () => [
  ['viking://resources/code/app.py', PY],
  ['viking://resources/code/util.ts', TS],
]);

const DIR = 'viking://resources/dirs/handbook';
const DIR_BODY = 'The handbook explains onboarding.\n\n## Chapters\n- onboarding\n- tooling';
const PLAIN_DIR = 'viking://resources/dirs/plain';
const BAD_DIR = 'viking://resources/dirs/broken';
/** Directories: with front matter, without, and with a front matter that never closes. */
const DIRS = scenario(
  'dirs',
  () => [],
  () => [
    [`${DIR}/.abstract.md`, 'Handbook directory.'],
    [`${DIR}/.overview.md`, `---\ndirectory: handbook\ntags: [docs]\n---\n\n${DIR_BODY}\n\n`],
    [`${PLAIN_DIR}/.overview.md`, 'Plain handbook overview, no front matter.\n'],
    [`${BAD_DIR}/.abstract.md`, 'Broken handbook directory.'],
    [`${BAD_DIR}/.overview.md`, '---\ndirectory: broken\nBroken handbook overview without a closing fence.\n'],
  ],
);

/** Summary forms of memory overviews (§4.4 rule 3). */
const SUMS = scenario('sums', (r) => [
  [`${r}/memories/events/heading.md`, 'Intro text first.\n### summary  \nDeep gist here.\n## Next\nmore text'],
  [`${r}/memories/events/legacy.md`, 'Summary: actor only.\n2026-07-09 ChatLog: details of the day'],
  [`${r}/memories/events/legacy2.md`, 'Summary:  multi\n  line   gist\nChatLog:\nrest of the log'],
  [`${r}/memories/events/nosummary.md`, '# Notes\nNo summary heading in this event.\n\nSecond block.'],
]);

/** Abstract substitutes: a memory and a resource whose abstracts exceed the cap. */
const SUB = scenario('sub', (r) => [
  [`${r}/memories/entities/long.md`, `# Summary\nLong entity gist.\n\n# Notes\n${'detail '.repeat(150).trim()}`],
  ['viking://resources/sub/long.md', `${'lengthy resource sentence '.repeat(10).trim()}.`],
]);

/** Everything pins act on: an event, an entity, a catch-all memory, a resource, a skill, a directory. */
const PIN = scenario(
  'pin',
  (r) => [
    [`${r}/memories/events/launch.md`, EVENT_BODY],
    [`${r}/memories/entities/openviking.md`, 'OpenViking: context database for AI agents.'],
    [`${r}/memories/trajectories/plan.md`, 'Trajectory: plan, build, ship the proxy.'],
    ['viking://resources/pin/doc.md', GENERIC_DOC],
    [`${r}/skills/deploy.md`, SKILL_BODY],
  ],
  () => [
    ['viking://resources/pin/dir/.abstract.md', 'Pinned directory abstract.'],
    ['viking://resources/pin/dir/.overview.md', '---\ndirectory: dir\n---\nPinned directory overview.'],
  ],
);

const ALL = [EV, MEM, RES, CODE, DIRS, SUMS, SUB, PIN];

beforeAll(async () => {
  cm = await startContractMesh();
  await Promise.all(
    ALL.map(async (s) => {
      await writeAll(cm, s.who, s.docs);
      for (const [uri, content] of s.sidecars ?? []) await writeSidecar(cm, s.who, uri, content);
    }),
  );
}, 120_000);

afterAll(async () => {
  await cm?.stop();
});

/** A context request that must succeed and satisfy every §5–§6 invariant. */
async function ask(s: Scenario, body: Record<string, unknown>): Promise<ContextJson> {
  const r = await context(cm, s.who, { limit: 30, ...body });
  expect(violations(r, 'estimate')).toEqual([]);
  return r;
}

/** Entry of a URI (fails the row when absent). */
function entry(r: ContextJson, uri: string): EntryJson {
  const e = r.entries.find((x) => x.uri === uri);
  if (!e) throw new Error(`no entry for ${uri} in ${JSON.stringify(r.entries.map((x) => x.uri))}`);
  return e;
}

/** (detail, text) of an entry. */
function served(r: ContextJson, uri: string): [string, string] {
  const e = entry(r, uri);
  return [e.detail, e.text];
}

/** The stored abstract of a node, read through `GET /api/v1/content/abstract`. */
async function storedAbstract(s: Scenario, uri: string): Promise<string> {
  const res = await send(cm.url, 'GET', `/api/v1/content/abstract?uri=${encodeURIComponent(uri)}`, undefined, headersFor(s.who));
  if (res.status !== 200) throw new Error(`abstract of ${uri}: ${res.status} ${res.raw}`);
  return res.body.result as string;
}

const evUri = EV.docs[0][0];
const [entUri, prefUri, expUri, trajUri] = MEM.docs.map(([u]) => u);
const pinUri = (suffix: string) => PIN.docs.find(([u]) => u.endsWith(suffix))![0];

interface Row {
  title: string;
  run: () => Promise<void>;
}

const rows: Row[] = [
  // §4.1 / §4.2 defaults ------------------------------------------------------------------------
  {
    title: '§4.2 events start at overview and deepen to full when it fits (full = body trimmed, MEMORY_FIELDS removed)',
    run: async () => {
      const r = await ask(EV, { query: 'shipped proxy' });
      expect(served(r, evUri)).toEqual(['full', EVENT_BODY]);
      expect(r.stats.fill.full_upgrades).toBe(1);
      const floor = fragmentOf({ ...entry(r, evUri), detail: 'overview', text: 'Shipped the stdio MCP proxy.' });
      expect(r.stats.fill.floor_tokens).toBe(estimate(floor));
    },
  },
  {
    title: '§4.2/§4.4 events stay at overview (the Summary section) when full does not fit',
    run: async () => {
      const r = await ask(EV, { query: 'shipped proxy', max_tokens: 64 });
      expect(served(r, evUri)).toEqual(['overview', 'Shipped the stdio MCP proxy.']);
      expect(r.stats.fill).toMatchObject({ full_upgrades: 0, spare_upgrades: 0 });
    },
  },
  {
    title: '§4.2 entities, preferences, experiences and catch-all memories start and stay at abstract (MEMORY_FIELDS removed), whatever the budget',
    run: async () => {
      const r = await ask(MEM, { query: 'proxy agents strict retro plan', max_tokens: 32000 });
      expect(Object.fromEntries(r.entries.map((e) => [e.uri, [e.category, e.detail, e.text]]))).toEqual({
        [entUri]: ['entities', 'abstract', 'OpenViking: context database for AI agents.'],
        [prefUri]: ['preferences', 'abstract', 'Prefers TypeScript strict mode & <no> any.'],
        [expUri]: ['experiences', 'abstract', 'Retro: shipping the proxy early worked.'],
        [trajUri]: ['memories', 'abstract', 'Trajectory: plan, build, ship the proxy.'],
      });
      expect(r.stats.tier_counts).toEqual({ abstract: 4 });
      expect(r.stats.fill).toEqual({ floor_tokens: r.stats.used_tokens, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 });
    },
  },
  {
    title: '§4.2 resources and skills start and stay at abstract (the stored abstract), never their body, whatever the budget',
    run: async () => {
      const r = await ask(RES, { query: 'title install deploy section word', max_tokens: 32000 });
      expect(r.entries).toHaveLength(3);
      for (const [uri, body] of RES.docs) {
        const [detail, text] = served(r, uri);
        expect(detail).toBe('abstract');
        expect(text).toBe(await storedAbstract(RES, uri));
        expect(text).not.toBe(body.trim());
      }
      expect(entry(r, RES.docs[2][0]).category).toBe('skills');
    },
  },

  // §4.3 detail pins ----------------------------------------------------------------------------
  {
    title: '§4.3 detail "full" pins every category at full (resources/skills/memories read their body); directories stay at overview',
    run: async () => {
      const r = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail: 'full', max_tokens: 32000 });
      expect(r.stats.detail).toBe('full');
      expect(served(r, pinUri('events/launch.md'))).toEqual(['full', EVENT_BODY]);
      expect(served(r, pinUri('entities/openviking.md'))).toEqual(['full', 'OpenViking: context database for AI agents.']);
      expect(served(r, pinUri('trajectories/plan.md'))).toEqual(['full', 'Trajectory: plan, build, ship the proxy.']);
      expect(served(r, 'viking://resources/pin/doc.md')).toEqual(['full', GENERIC_DOC.trim()]);
      expect(served(r, pinUri('skills/deploy.md'))).toEqual(['full', SKILL_BODY]);
      expect(served(r, 'viking://resources/pin/dir')).toEqual(['overview', 'Pinned directory overview.']);
    },
  },
  {
    title: '§4.3 detail "overview" is start and ceiling: events do not deepen, resources show their overview',
    run: async () => {
      const r = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail: 'overview', max_tokens: 32000 });
      expect(r.stats.detail).toBe('overview');
      expect(served(r, pinUri('events/launch.md'))).toEqual(['overview', 'Shipped the stdio MCP proxy.']);
      expect(served(r, 'viking://resources/pin/doc.md')).toEqual(['overview', GENERIC_OVERVIEW]);
      expect(served(r, pinUri('skills/deploy.md'))).toEqual(['overview', '# Deploy skill\n  ## Steps\n\nRun the deploy script for the proxy.']);
      expect(served(r, 'viking://resources/pin/dir')).toEqual(['overview', 'Pinned directory overview.']);
      expect(r.stats.fill.full_upgrades + r.stats.fill.spare_upgrades).toBe(0);
    },
  },
  {
    title: '§4.3 detail "abstract": events are served at abstract (a memory abstract is its whole body); directories stay at overview',
    run: async () => {
      const r = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail: 'abstract', max_tokens: 32000 });
      expect(r.stats.detail).toBe('abstract');
      expect(served(r, pinUri('events/launch.md'))).toEqual(['abstract', EVENT_BODY]);
      expect(entry(r, 'viking://resources/pin/doc.md').detail).toBe('abstract');
      expect(served(r, 'viking://resources/pin/dir')).toEqual(['overview', 'Pinned directory overview.']);
    },
  },
  {
    title: '§4.3 a detail object pins only its categories (incl. memories); others keep their defaults; stats.detail is the map',
    run: async () => {
      const r = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail: { resources: 'full', memories: 'full' }, max_tokens: 32000 });
      expect(r.stats.detail).toEqual({ resources: 'full', memories: 'full' });
      expect(served(r, 'viking://resources/pin/doc.md')).toEqual(['full', GENERIC_DOC.trim()]);
      expect(entry(r, pinUri('trajectories/plan.md')).detail).toBe('full');
      expect(entry(r, pinUri('entities/openviking.md')).detail).toBe('abstract');
      expect(entry(r, pinUri('skills/deploy.md')).detail).toBe('abstract');
      expect(entry(r, pinUri('events/launch.md')).detail).toBe('full');
      expect(served(r, 'viking://resources/pin/dir')).toEqual(['overview', 'Pinned directory overview.']);
      const ev = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail: { events: 'overview' }, max_tokens: 32000 });
      expect(entry(ev, pinUri('events/launch.md')).detail).toBe('overview');
    },
  },
  {
    title: '§1.3/§4.3 detail "auto" (and null) means no pin: defaults, stats.detail null',
    run: async () => {
      for (const detail of ['auto', null]) {
        const r = await ask(PIN, { query: 'proxy agents plan title deploy directory', detail, max_tokens: 32000 });
        expect(r.stats.detail).toBeNull();
        expect(entry(r, 'viking://resources/pin/doc.md').detail).toBe('abstract');
        expect(entry(r, pinUri('events/launch.md')).detail).toBe('full');
      }
    },
  },

  // §4.2 substitutes ----------------------------------------------------------------------------
  {
    title: '§4.2/§5.3 an oversized memory abstract is substituted by its overview; a resource degrades to uri instead',
    run: async () => {
      const r = await ask(SUB, { query: 'long entity lengthy resource', quotas: { entities: 1, resources: 1 }, max_tokens: 64 });
      expect(r.stats.per_entry_cap).toBe(64);
      expect(served(r, SUB.docs[0][0])).toEqual(['overview', 'Long entity gist.']);
      expect(served(r, 'viking://resources/sub/long.md')).toEqual(['uri', '']);
    },
  },
  {
    title: '§4.3 a memory pinned at abstract may be served at its overview substitute (the served tier outranks the pin)',
    run: async () => {
      const r = await ask(SUB, { query: 'long entity', quotas: { entities: 1 }, detail: { entities: 'abstract' }, max_tokens: 64, limit: 10 });
      expect(served(r, SUB.docs[0][0])).toEqual(['overview', 'Long entity gist.']);
      expect(r.stats.detail).toEqual({ entities: 'abstract' });
    },
  },

  // §4.2 / §4.4 rule 1 directories -------------------------------------------------------------
  {
    title: '§4.2/§4.4 a directory is served at overview from its .overview.md without front matter, never full, pin ignored',
    run: async () => {
      for (const detail of [null, 'full', 'abstract']) {
        const r = await ask(DIRS, { query: 'handbook onboarding', detail, max_tokens: 32000 });
        expect(served(r, DIR)).toEqual(['overview', DIR_BODY]);
        expect(entry(r, DIR).category).toBe('resources');
      }
    },
  },
  {
    title: '§4.4 a directory overview without a leading --- line is used as is',
    run: async () => {
      const r = await ask(DIRS, { query: 'plain handbook overview' });
      expect(served(r, PLAIN_DIR)).toEqual(['overview', 'Plain handbook overview, no front matter.']);
    },
  },
  {
    title: '§4.4/§11.2 a front matter that never closes does not fail the request: the directory falls back below overview (ctxmesh: 200, not 500)',
    run: async () => {
      const r = await ask(DIRS, { query: 'broken handbook directory' });
      const e = entry(r, BAD_DIR);
      expect(e.detail).not.toBe('overview');
      expect(['abstract', 'uri']).toContain(e.detail);
    },
  },

  // §4.4 rule 2 code ------------------------------------------------------------------------------
  {
    title: '§4.4 a code file\'s overview is its tag-query skeleton with the "# <filename> [aider-repomap-lite, compact]" header (Python)',
    run: async () => {
      const r = await ask(CODE, { query: 'greeter hello main add box', detail: { resources: 'overview' } });
      expect(served(r, 'viking://resources/code/app.py')).toEqual(['overview', '# app.py [aider-repomap-lite, compact]\nclass Greeter\n  + hello(self, name)\ndef main()']);
    },
  },
  {
    title: '§4.4 a code file\'s overview is its tag-query skeleton (TypeScript): signatures only, no bodies',
    run: async () => {
      const r = await ask(CODE, { query: 'greeter hello main add box', detail: { resources: 'overview' } });
      expect(served(r, 'viking://resources/code/util.ts')).toEqual(['overview', '# util.ts [aider-repomap-lite, compact]\nfunction add(a: number, b: number): number\nclass Box\n  + open(): void']);
    },
  },

  // §4.4 rule 3 memory summaries -------------------------------------------------------------------
  {
    title: '§4.4 memory overview: a "#–### Summary" heading anywhere, case-insensitive, up to the next heading',
    run: async () => {
      const r = await ask(SUMS, { query: 'gist summary notes', detail: { events: 'overview' } });
      expect(served(r, SUMS.docs[0][0])).toEqual(['overview', 'Deep gist here.']);
    },
  },
  {
    title: '§4.4 memory overview: the legacy inline "Summary:" form up to a ChatLog line, whitespace collapsed',
    run: async () => {
      const r = await ask(SUMS, { query: 'gist summary notes', detail: { events: 'overview' } });
      expect(served(r, SUMS.docs[1][0])).toEqual(['overview', 'actor only.']);
      expect(served(r, SUMS.docs[2][0])).toEqual(['overview', 'multi line gist']);
    },
  },
  {
    title: '§4.4 a memory without a Summary falls through to the generic document overview',
    run: async () => {
      const r = await ask(SUMS, { query: 'gist summary notes', detail: { events: 'overview' } });
      expect(served(r, SUMS.docs[3][0])).toEqual(['overview', '# Notes\n\nNo summary heading in this event.']);
    },
  },

  // §4.4 rule 4 generic documents -------------------------------------------------------------------
  {
    title: '§4.4 generic document overview: heading tree (levels 1–3, indented) + first paragraph — the spec example',
    run: async () => {
      const r = await ask(RES, { query: 'title install deploy section word', detail: { resources: 'overview' } });
      expect(served(r, 'viking://resources/res/doc.md')).toEqual(['overview', GENERIC_OVERVIEW]);
    },
  },
  {
    title: '§4.4 generic document overview: at most 24 headings, first paragraph cut to 400 characters',
    run: async () => {
      const r = await ask(RES, { query: 'title install deploy section word', detail: { resources: 'overview' } });
      const headings = Array.from({ length: 24 }, (_, i) => `  ## Section ${i + 1}`).join('\n');
      // The whole overview is trimmed, so the first (level-2) heading loses its indent.
      expect(served(r, 'viking://resources/res/many.md')).toEqual(['overview', `${headings}\n\n${LONG_PARAGRAPH.slice(0, 400)}`.trim()]);
    },
  },
];

describe('context mode through HTTP: tiers (§4)', () => {
  it.each(rows)('$title', async ({ run }) => {
    await run();
  });
});
