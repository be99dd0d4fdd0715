/**
 * Context-contract §1.1, §1.3, §1.6 and §1.7 through the HTTP API of the whole mesh (dev auth
 * mode): which `/search` requests are 400 and with which envelope, which edge values are
 * accepted, the success envelope, and the headers every answer carries.
 *
 * Messages of request-validation errors follow pydantic v2 wording; §11.2 says to compare
 * status, code and substrings, so exact messages are pinned only where the spec gives them.
 */
import { startContractMesh, freshWho, rootOf, search, write, type Answer, type ContractMesh, type Who } from './harness';

jest.setTimeout(60_000);

let cm: ContractMesh;
const W: Who = freshWho('val');

beforeAll(async () => {
  cm = await startContractMesh();
  await write(cm, W, `${rootOf(W)}/memories/events/apricot.md`, '# Summary\nApricot jam day.\n\n# Log\napricot');
  await write(cm, W, 'viking://resources/val/apricot.md', 'Apricot orchard guide.');
}, 60_000);

afterAll(async () => {
  await cm?.stop();
});

const ALLOWED_QUOTAS = 'events, entities, preferences, experiences, resources, skills';

/** Expected failure of a request. */
interface Rejection {
  title: string;
  body: unknown;
  headers?: Record<string, string>;
  /** 1 = request validation (pydantic-style envelope), 2 = domain error envelope. */
  variant: 1 | 2;
  code?: 'INVALID_ARGUMENT' | 'INVALID_URI';
  /** Exact message, or a substring when wrapped in `contains()`. */
  message: string | { contains: string };
  /** Variant 1: loc of the first issue. */
  loc?: Array<string | number>;
  /** Variant 1: type of the first issue. */
  type?: string;
}

const contains = (s: string) => ({ contains: s });
const value = (msg: string) => `Invalid request parameters: body: Value error, ${msg}`;
const ctx = (extra: Record<string, unknown>) => ({ query: 'apricot', mode: 'context', ...extra });

const rejections: Rejection[] = [
  // §1.3 mode cross-validation.
  {
    title: '§1.3 list mode with a context-only field (even at its default value) is 400',
    body: { query: 'apricot', mode: 'list', max_tokens: 1600 },
    variant: 1,
    message: value("max_tokens require mode='context'; set mode='context' or drop these fields"),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 presence counts: mode omitted (list) with quotas: null is 400',
    body: { query: 'apricot', quotas: null },
    variant: 1,
    message: value("quotas require mode='context'; set mode='context' or drop these fields"),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 several context-only fields in list mode are named sorted and comma-joined',
    body: { query: 'apricot', rewrite: false, exclude_uris: [], detail: null, dedup_turns: 0, peer_scope: 'all' },
    variant: 1,
    message: value("dedup_turns, detail, exclude_uris, peer_scope, rewrite require mode='context'; set mode='context' or drop these fields"),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 context mode with a non-empty target_uri string is 400',
    body: ctx({ target_uri: 'viking://resources' }),
    variant: 1,
    message: value("target_uri is not supported in mode='context'"),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 context mode with a non-empty target_uri list is 400',
    body: ctx({ target_uri: ['viking://resources'] }),
    variant: 1,
    message: value("target_uri is not supported in mode='context'"),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 unknown quota keys (memories is not a quota) are 400, sorted',
    body: ctx({ quotas: { memories: 1, bogus: 2, events: 1 } }),
    variant: 1,
    message: value(`unknown quota keys: bogus, memories; allowed: ${ALLOWED_QUOTAS}`),
    loc: ['body'],
    type: 'value_error',
  },
  {
    title: '§1.3 unknown detail keys are 400 (memories allowed), sorted by code point',
    body: ctx({ detail: { memories: 'full', bogus: 'full', Events: 'full' } }),
    variant: 1,
    message: value(`unknown detail keys: Events, bogus; allowed: ${ALLOWED_QUOTAS}, memories`),
    loc: ['body'],
    type: 'value_error',
  },
  // §1.7 field validation.
  { title: '§1.3/§1.7 a detail object value outside abstract|overview|full is 400', body: ctx({ detail: { events: 'uri' } }), variant: 1, message: contains('body.detail') },
  { title: '§1.3/§1.7 a detail scalar outside auto|abstract|overview|full is 400', body: ctx({ detail: 'everything' }), variant: 1, message: contains('body.detail') },
  { title: '§1.7 max_tokens 63 is 400', body: ctx({ max_tokens: 63 }), variant: 1, message: contains('body.max_tokens'), loc: ['body', 'max_tokens'] },
  { title: '§1.7 max_tokens 32001 is 400', body: ctx({ max_tokens: 32001 }), variant: 1, message: contains('body.max_tokens'), loc: ['body', 'max_tokens'] },
  { title: '§1.7 dedup_turns 101 is 400', body: ctx({ dedup_turns: 101 }), variant: 1, message: contains('body.dedup_turns'), loc: ['body', 'dedup_turns'] },
  { title: '§1.7 dedup_turns -1 is 400', body: ctx({ dedup_turns: -1 }), variant: 1, message: contains('body.dedup_turns'), loc: ['body', 'dedup_turns'] },
  {
    title: '§1.7 more than 200 exclude_uris is 400',
    body: ctx({ exclude_uris: Array.from({ length: 201 }, (_, i) => `viking://resources/val/x${i}.md`) }),
    variant: 1,
    message: contains('body.exclude_uris'),
  },
  { title: '§1.7 rewrite_max_bullets 0 is 400', body: ctx({ rewrite_max_bullets: 0 }), variant: 1, message: contains('body.rewrite_max_bullets') },
  { title: '§1.7 rewrite_max_bullets 21 is 400', body: ctx({ rewrite_max_bullets: 21 }), variant: 1, message: contains('body.rewrite_max_bullets') },
  { title: '§1.7 a bad mode is 400', body: { query: 'apricot', mode: 'ctx' }, variant: 1, message: contains('body.mode'), loc: ['body', 'mode'] },
  { title: '§1.7 a bad purpose is 400', body: ctx({ purpose: 'fun' }), variant: 1, message: contains('body.purpose'), loc: ['body', 'purpose'] },
  { title: '§1.7 a bad peer_scope is 400', body: ctx({ peer_scope: 'everyone' }), variant: 1, message: contains('body.peer_scope'), loc: ['body', 'peer_scope'] },
  { title: '§1.7 a bad query_expansion is 400', body: ctx({ query_expansion: 'on' }), variant: 1, message: contains('body.query_expansion'), loc: ['body', 'query_expansion'] },
  { title: '§1.7 a bad time_field is 400', body: ctx({ time_field: 'mtime' }), variant: 1, message: contains('body.time_field'), loc: ['body', 'time_field'] },
  { title: '§1.7 rewrite other than bool/"auto" is 400 (pydantic lax bools such as "yes" count as bool)', body: ctx({ rewrite: 'sometimes' }), variant: 1, message: contains('body.rewrite') },
  { title: '§1.7 quota values that are not ints are 400', body: ctx({ quotas: { events: 'many' } }), variant: 1, message: contains('body.quotas') },
  { title: '§1.7 a fractional quota value is 400', body: ctx({ quotas: { events: 1.5 } }), variant: 1, message: contains('body.quotas') },
  { title: '§1.7/additions an unknown tokenizer is 400', body: ctx({ tokenizer: 'gpt2' }), variant: 1, message: contains('body.tokenizer'), loc: ['body', 'tokenizer'] },
  { title: '§1.7/additions time_budget_ms 0 is 400', body: ctx({ time_budget_ms: 0 }), variant: 1, message: contains('body.time_budget_ms'), loc: ['body', 'time_budget_ms'] },
  {
    title: '§1.7 an unknown field is 400 extra_forbidden at body.<name>',
    body: ctx({ unexpected: 1 }),
    variant: 1,
    message: 'Invalid request parameters: body.unexpected: Extra inputs are not permitted',
    loc: ['body', 'unexpected'],
    type: 'extra_forbidden',
  },
  { title: '§1.7 a body that is not JSON is 400', body: { raw: '{"query": "apricot", "mode": "context",' }, variant: 1, message: contains('Invalid request parameters: body'), type: 'json_invalid' },
  { title: '§1.7 a JSON body that is not an object is 400', body: { raw: '["apricot"]' }, variant: 1, message: contains('Invalid request parameters: body') },
  // §1.7 domain errors.
  {
    title: '§1.7 flat context mode with a blank query is 400 "Search query or image_url must not be empty." (domain envelope)',
    body: ctx({ query: '   ' }),
    variant: 2,
    code: 'INVALID_ARGUMENT',
    message: 'Search query or image_url must not be empty.',
  },
  {
    title: '§1.7 bucketed context mode with a blank query is 400 once a bucket searches',
    body: ctx({ query: '', quotas: { events: 1 } }),
    variant: 2,
    code: 'INVALID_ARGUMENT',
    message: 'Search query or image_url must not be empty.',
  },
  {
    title: '§1.7 an omitted query in context mode is a blank query',
    body: { mode: 'context' },
    variant: 2,
    code: 'INVALID_ARGUMENT',
    message: 'Search query or image_url must not be empty.',
  },
  { title: '§1.7 an exclude_uris item that is not viking:// is INVALID_URI', body: ctx({ exclude_uris: ['https://example.com/x'] }), variant: 2, code: 'INVALID_URI', message: contains('https://example.com/x') },
  { title: '§1.7 an exclude_uris item with an unknown scope is INVALID_URI', body: ctx({ exclude_uris: ['viking://nowhere/x.md'] }), variant: 2, code: 'INVALID_URI', message: contains('viking://nowhere/x.md') },
  { title: '§1.7 an exclude_uris item in the removed uid-less form is INVALID_URI', body: ctx({ exclude_uris: ['viking://user/memories/events/x.md'] }), variant: 2, code: 'INVALID_URI', message: contains('viking://user/memories') },
  { title: '§1.7 an invalid context_type is 400', body: ctx({ context_type: 'document' }), variant: 2, code: 'INVALID_ARGUMENT', message: contains('context_type must be one or more of: memory, resource, skill') },
  { title: '§1.7 a tag that is not strict k=v is 400', body: ctx({ tags: ['novalue'] }), variant: 2, code: 'INVALID_ARGUMENT', message: contains('novalue') },
  { title: '§1.7 an unparsable since is 400', body: ctx({ since: 'yesterday' }), variant: 2, code: 'INVALID_ARGUMENT', message: contains('yesterday') },
  { title: '§1.7 since later than until is 400', body: ctx({ since: '2026-02-01', until: '2026-01-01' }), variant: 2, code: 'INVALID_ARGUMENT', message: 'since must be earlier than or equal to until' },
  { title: '§1.7 an invalid telemetry request is 400 (mentions events)', body: ctx({ telemetry: { summary: false, events: true } }), variant: 2, code: 'INVALID_ARGUMENT', message: contains('events') },
  ...['a/b', 'a\\b', '..', '.', 'a@b@c', 'sp ace', 'é'].map(
    (peer): Rejection => ({
      title: `§1.1/§1.7 X-OpenViking-Actor-Peer ${JSON.stringify(peer)} is 400 INVALID_ARGUMENT`,
      body: ctx({}),
      headers: { 'X-OpenViking-Actor-Peer': peer },
      variant: 2,
      code: 'INVALID_ARGUMENT',
      message: contains('X-OpenViking-Actor-Peer'),
    }),
  ),
];

/** Check an error answer against a rejection row. */
function expectRejected(res: Answer, r: Rejection): void {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const msg = res.body?.error?.message as string;
  if (typeof r.message === 'string') expect(msg).toBe(r.message);
  else expect(msg).toContain(r.message.contains);
  if (r.variant === 1) {
    // Variant 1 has exactly `status` and `error`, no null members (§1.7; issue 19 item 5).
    // details.validation_errors[0] mirrors the message.
    expect(Object.keys(res.body)).toEqual(['status', 'error']);
    expect(res.body.status).toBe('error');
    expect(res.body.error.code).toBe('INVALID_ARGUMENT');
    const issues = res.body.error.details.validation_errors as Array<{ loc: Array<string | number>; message: string; type: string }>;
    expect(issues.length).toBeGreaterThan(0);
    for (const i of issues) expect(Object.keys(i)).toEqual(['loc', 'message', 'type']);
    expect(issues[0].loc[0]).toBe('body');
    expect(msg).toBe(`Invalid request parameters: ${issues[0].loc.join('.')}: ${issues[0].message}`);
    if (r.loc) expect(issues[0].loc).toEqual(r.loc);
    if (r.type) expect(issues[0].type).toBe(r.type);
  } else {
    // Variant 2: dumped without dropping nulls.
    expect(Object.keys(res.body)).toEqual(['status', 'result', 'error', 'telemetry', 'profile']);
    expect(res.body).toMatchObject({ status: 'error', result: null, telemetry: null, profile: null });
    expect(res.body.error.code).toBe(r.code);
    expect(Object.keys(res.body.error)).toEqual(['code', 'message', 'details']);
  }
}

/** Accepted edge values: `body` must answer 200, then `check` the result. */
interface Acceptance {
  title: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  check: (result: any) => void;
}

const acceptances: Acceptance[] = [
  { title: '§1.3 context mode accepts target_uri ""', body: ctx({ target_uri: '' }), check: (r) => expect(r.stats.returned).toBeGreaterThan(0) },
  { title: '§1.3 context mode accepts target_uri []', body: ctx({ target_uri: [] }), check: (r) => expect(r.stats.returned).toBeGreaterThan(0) },
  { title: '§1.3 max_tokens 64 is accepted', body: ctx({ max_tokens: 64 }), check: (r) => expect(r.stats.max_tokens).toBe(64) },
  { title: '§1.3 max_tokens 32000 is accepted', body: ctx({ max_tokens: 32000 }), check: (r) => expect(r.stats.max_tokens).toBe(32000) },
  { title: '§1.3 max_tokens defaults to 1600', body: ctx({}), check: (r) => expect(r.stats.max_tokens).toBe(1600) },
  { title: '§1.3 dedup_turns 100 and rewrite_max_bullets 1/20 are accepted', body: ctx({ dedup_turns: 100, rewrite_max_bullets: 20 }), check: (r) => expect(r.stats.dedup.turns).toBe(100) },
  { title: '§1.3 rewrite_max_bullets 1 is accepted', body: ctx({ rewrite_max_bullets: 1 }), check: (r) => expect(r.stats.rewrite).toBe('off') },
  {
    title: '§1.3 exactly 200 exclude_uris are accepted',
    body: ctx({ exclude_uris: Array.from({ length: 200 }, (_, i) => `viking://resources/val/x${i}.md`) }),
    check: (r) => expect(r.stats.excluded).toBe(0),
  },
  { title: '§1.3 detail "auto" is accepted and means unset', body: ctx({ detail: 'auto' }), check: (r) => expect(r.stats.detail).toBeNull() },
  { title: '§1.3 a detail object with memories is accepted', body: ctx({ detail: { memories: 'full' } }), check: (r) => expect(r.stats.detail).toEqual({ memories: 'full' }) },
  { title: '§1.3/§3.3 quotas {} with a blank query is 200 and empty', body: ctx({ query: '', quotas: {} }), check: (r) => expect(r.entries).toEqual([]) },
  { title: '§1.3 include_provenance is silently ignored in context mode', body: ctx({ include_provenance: true }), check: (r) => expect(r.stats.ignored).toBeUndefined() },
  { title: '§1.3 level is reported in stats.ignored', body: ctx({ level: '0,2' }), check: (r) => expect(r.stats.ignored).toEqual(['level']) },
  { title: '§1.1 a blank actor-peer header counts as absent', body: ctx({}), headers: { 'X-OpenViking-Actor-Peer': '   ' }, check: (r) => expect(r.stats.origins.actor_peer).toBe(0) },
  { title: '§1.3 rewrite "auto" is accepted (no model configured: off)', body: ctx({ rewrite: 'auto' }), check: (r) => expect(['off', 'ok', 'failed']).toContain(r.stats.rewrite) },
];

describe('context mode through HTTP: requests that are 400 (§1.3, §1.7)', () => {
  it.each(rejections)('$title', async (r) => {
    const res = await search(cm, W, r.body, r.headers);
    expectRejected(res, r);
  });
});

describe('context mode through HTTP: accepted edge values (§1.3)', () => {
  it.each(acceptances)('$title', async ({ body, headers, check }) => {
    const res = await search(cm, W, body, headers);
    expect(res.status).toBe(200);
    check(res.body.result);
  });
});

interface EnvelopeRow {
  title: string;
  run: () => Promise<void>;
}

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const envelopeRows: EnvelopeRow[] = [
  {
    title: '§1.6 the success envelope is exactly {status:"ok", result} (no time, no telemetry unless asked), JSON',
    run: async () => {
      const res = await search(cm, W, ctx({}));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(res.body)).toEqual(['status', 'result']);
      expect(res.body.status).toBe('ok');
      expect(Object.keys(res.body.result)).toEqual(['entries', 'rendered', 'digest', 'stats']);
      expect(res.raw).not.toContain('"time"');
    },
  },
  {
    title: '§1.6 telemetry true or {summary:true} adds a telemetry member after result',
    run: async () => {
      for (const telemetry of [true, { summary: true }]) {
        const res = await search(cm, W, ctx({ telemetry }));
        expect(Object.keys(res.body)).toEqual(['status', 'result', 'telemetry']);
        expect(res.body.telemetry).toEqual(expect.any(Object));
      }
      const off = await search(cm, W, ctx({ telemetry: false }));
      expect(Object.keys(off.body)).toEqual(['status', 'result']);
    },
  },
  {
    title: '§1.1 every answer carries X-Process-Time (seconds, float string), success and error alike',
    run: async () => {
      for (const body of [ctx({}), ctx({ max_tokens: 1 })]) {
        const res = await search(cm, W, body);
        const t = res.headers.get('x-process-time');
        expect(t).toMatch(/^\d+(\.\d+)?(e-?\d+)?$/);
        expect(Number(t)).toBeGreaterThanOrEqual(0);
      }
    },
  },
  {
    title: '§1.1 X-Request-ID is echoed when it is one value of [A-Za-z0-9._:-]{1,128}, else a fresh UUID4 (errors too)',
    run: async () => {
      const ok = await search(cm, W, ctx({}), { 'X-Request-ID': 'plugin-req:42.a_b' });
      expect(ok.headers.get('x-request-id')).toBe('plugin-req:42.a_b');
      const err = await search(cm, W, ctx({ max_tokens: 1 }), { 'X-Request-ID': 'plugin-req:43' });
      expect(err.status).toBe(400);
      expect(err.headers.get('x-request-id')).toBe('plugin-req:43');
      for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
        const res = await search(cm, W, ctx({}), { 'X-Request-ID': bad });
        expect(res.headers.get('x-request-id')).toMatch(UUID4);
      }
      expect((await search(cm, W, ctx({}))).headers.get('x-request-id')).toMatch(UUID4);
    },
  },
];

describe('context mode through HTTP: envelope and headers (§1.1, §1.6)', () => {
  it.each(envelopeRows)('$title', async ({ run }) => {
    await run();
  });
});
