import fc from 'fast-check';
import { gatherCandidates, planQueries, type GatherParams, type SearchCall, type SearchLists } from '@ctxmesh/kernel';
import { DomainError, RequestValidationError, toDomainError } from './errors';
import type { Identity } from './headers';
import {
  invalidJsonBody,
  validateFindBody,
  validateRecallBody,
  validateSearchBody,
  type ContextParams,
  type RequestContext,
} from './requests';
import { envelopeOf } from '../mapping/envelope';
import { thrownBy } from '@ctxmesh/testing';

const NOW = Date.UTC(2026, 6, 14, 12, 0, 0);
const dev: RequestContext = { identity: { userId: 'default', role: 'root' }, nowMs: NOW };
const QUOTA_ALLOWED = 'allowed: events, entities, preferences, experiences, resources, skills';
const DETAIL_ALLOWED = `${QUOTA_ALLOWED}, memories`;
const D_PENALTIES = { events: 0.1, entities: 0.1, preferences: 0.02, experiences: 0.02, resources: 0.02, skills: 0.02, memories: 0.1 };

/** [status, code, message] of a thrown validation or domain error. */
function outcome(fn: () => unknown): [number, string, string] {
  const e = thrownBy(fn);
  if (e instanceof RequestValidationError) return [e.status, e.code, e.message];
  if (e instanceof DomainError) return [e.status, e.code, e.message];
  throw e;
}

const search = (body: unknown) => validateSearchBody(body, dev);
const context = (body: object): ContextParams => {
  const r = search({ mode: 'context', ...body });
  if (r.mode !== 'context') throw new Error('not context');
  return r.params;
};
const recall = (body: unknown) => validateRecallBody(body, dev);
const P = 'Invalid request parameters: ';

describe('validateSearchBody', () => {
  describe('request-validation 400s (variant 1)', () => {
    it.each<[string, unknown, string]>([
      ['unknown field', { query: 'q', unexpected: 1 }, 'body.unexpected: Extra inputs are not permitted'],
      ['unknown field in context mode', { query: 'q', mode: 'context', events: 1 }, 'body.events: Extra inputs are not permitted'],
      ['body is a list', [1], 'body: Input should be a valid dictionary or object to extract fields from'],
      ['bad mode', { query: 'q', mode: 'ctx' }, "body.mode: Input should be 'list' or 'context'"],
      ['bad purpose', { mode: 'context', purpose: 'writing' }, "body.purpose: Input should be 'chat' or 'coding'"],
      ['bad peer_scope', { mode: 'context', peer_scope: 'none' }, "body.peer_scope: Input should be 'actor' or 'all'"],
      ['bad query_expansion', { mode: 'context', query_expansion: 'on' }, "body.query_expansion: Input should be 'off' or 'auto'"],
      ['bad time_field', { query: 'q', time_field: 'mtime' }, "body.time_field: Input should be 'updated_at' or 'created_at'"],
      ['max_tokens below 64', { mode: 'context', max_tokens: 63 }, 'body.max_tokens: Input should be greater than or equal to 64'],
      ['max_tokens above 32000', { mode: 'context', max_tokens: 32001 }, 'body.max_tokens: Input should be less than or equal to 32000'],
      ['dedup_turns below 0', { mode: 'context', dedup_turns: -1 }, 'body.dedup_turns: Input should be greater than or equal to 0'],
      ['dedup_turns above 100', { mode: 'context', dedup_turns: 101 }, 'body.dedup_turns: Input should be less than or equal to 100'],
      ['rewrite_max_bullets 0', { mode: 'context', rewrite_max_bullets: 0 }, 'body.rewrite_max_bullets: Input should be greater than or equal to 1'],
      ['rewrite_max_bullets 21', { mode: 'context', rewrite_max_bullets: 21 }, 'body.rewrite_max_bullets: Input should be less than or equal to 20'],
      [
        'exclude_uris over 200',
        { mode: 'context', exclude_uris: Array(201).fill('viking://resources/a') },
        'body.exclude_uris: List should have at most 200 items after validation, not 201',
      ],
      ['rewrite not bool/"auto"', { mode: 'context', rewrite: 'sometimes' }, 'body.rewrite.bool: Input should be a valid boolean, unable to interpret input'],
      ['detail scalar unknown', { mode: 'context', detail: 'brief' }, "body.detail.literal['auto','abstract','overview','full']: Input should be 'auto', 'abstract', 'overview' or 'full'"],
      [
        'detail object value outside the tiers',
        { mode: 'context', detail: { events: 'huge' } },
        "body.detail.literal['auto','abstract','overview','full']: Input should be 'auto', 'abstract', 'overview' or 'full'",
      ],
      ['quotas value not an int', { mode: 'context', quotas: { events: 'x' } }, 'body.quotas.events: Input should be a valid integer, unable to parse string as an integer'],
      ['quotas value fractional', { mode: 'context', quotas: { events: 1.5 } }, 'body.quotas.events: Input should be a valid integer, got a number with a fractional part'],
      ['quotas not an object', { mode: 'context', quotas: [1] }, 'body.quotas: Input should be a valid dictionary'],
      ['tokenizer unknown', { mode: 'context', tokenizer: 'gpt2' }, "body.tokenizer: Input should be 'estimate', 'o200k_base' or 'cl100k_base'"],
      ['tokenizer null', { mode: 'context', tokenizer: null }, "body.tokenizer: Input should be 'estimate', 'o200k_base' or 'cl100k_base'"],
      ['time_budget_ms 0', { mode: 'context', time_budget_ms: 0 }, 'body.time_budget_ms: Input should be greater than or equal to 1'],
      // The message names the field and the values, and none of the words that make the plugins
      // cache this server as pre-context for six hours ("mode", "extra", "unexpected").
      ['packing unknown', { mode: 'context', packing: 'greedy' }, "body.packing: Input should be 'compat' or 'evidence'"],
      ['packing null', { mode: 'context', packing: null }, "body.packing: Input should be 'compat' or 'evidence'"],
      ['packing in another case', { mode: 'context', packing: 'Evidence' }, "body.packing: Input should be 'compat' or 'evidence'"],
      ['query not a string', { query: 5 }, 'body.query: Input should be a valid string'],
      ['target_uri of numbers', { query: 'q', target_uri: 5 }, 'body.target_uri.str: Input should be a valid string'],
      ['limit not an int', { query: 'q', limit: 'ten' }, 'body.limit: Input should be a valid integer, unable to parse string as an integer'],
      ['tags not strings', { query: 'q', tags: ['a=b', 3] }, 'body.tags.1: Input should be a valid string'],
      [
        'list mode with a context-only field at its default',
        { query: 'q', max_tokens: 1600 },
        "body: Value error, max_tokens require mode='context'; set mode='context' or drop these fields",
      ],
      [
        'list mode with null and default context-only fields, sorted',
        { query: 'q', quotas: null, exclude_uris: [], dedup_turns: 0 },
        "body: Value error, dedup_turns, exclude_uris, quotas require mode='context'; set mode='context' or drop these fields",
      ],
      [
        'explicit list mode with an addition',
        { query: 'q', mode: 'list', time_budget_ms: 500, tokenizer: 'estimate' },
        "body: Value error, time_budget_ms, tokenizer require mode='context'; set mode='context' or drop these fields",
      ],
      ['list mode with a packing', { query: 'q', packing: 'evidence' }, "body: Value error, packing require mode='context'; set mode='context' or drop these fields"],
      ['context mode with a target_uri', { query: 'q', mode: 'context', target_uri: 'viking://resources' }, "body: Value error, target_uri is not supported in mode='context'"],
      ['context mode with a target_uri list', { query: 'q', mode: 'context', target_uri: ['viking://resources'] }, "body: Value error, target_uri is not supported in mode='context'"],
      ['context mode with a blank target_uri', { query: 'q', mode: 'context', target_uri: ' ' }, "body: Value error, target_uri is not supported in mode='context'"],
      ['unknown quota keys', { mode: 'context', quotas: { memories: 1, bogus: 2, events: 1 } }, `body: Value error, unknown quota keys: bogus, memories; ${QUOTA_ALLOWED}`],
      ['unknown detail keys', { mode: 'context', detail: { foo: 'full', events: 'full', Bar: 'abstract' } }, `body: Value error, unknown detail keys: Bar, foo; ${DETAIL_ALLOWED}`],
    ])('%s', (_t, body, msg) => {
      expect(outcome(() => search(body))).toEqual([400, 'INVALID_ARGUMENT', P + msg]);
    });

    it('reports field errors before the mode cross-validation', () => {
      expect(outcome(() => search({ query: 'q', max_tokens: 10 }))[2]).toBe(`${P}body.max_tokens: Input should be greater than or equal to 64`);
    });

    it('lists every problem in details.validation_errors', () => {
      const e = thrownBy(() => search({ query: 'q', limit: 'x', bogus: 1 })) as RequestValidationError;
      expect(envelopeOf(e).error.details.validation_errors).toEqual([
        { loc: ['body', 'limit'], message: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' },
        { loc: ['body', 'bogus'], message: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]);
    });

    it('builds the json_invalid error for an unparsable body', () => {
      expect(envelopeOf(invalidJsonBody(7)).error).toEqual({
        code: 'INVALID_ARGUMENT',
        message: 'Invalid request parameters: body.7: JSON decode error',
        details: { validation_errors: [{ loc: ['body', 7], message: 'JSON decode error', type: 'json_invalid' }] },
      });
    });
  });

  describe('domain 400s (variant 2)', () => {
    it.each<[string, object, number, string, string]>([
      ['bad context_type (list)', { query: 'q', context_type: 'doc' }, 400, 'INVALID_ARGUMENT', 'context_type must be one or more of: memory, resource, skill'],
      ['bad context_type (context)', { query: 'q', mode: 'context', context_type: ['memory', 'doc'] }, 400, 'INVALID_ARGUMENT', 'context_type must be one or more of: memory, resource, skill'],
      ['since after until', { query: 'q', mode: 'context', since: '2026-07-02', until: '2026-07-01' }, 400, 'INVALID_ARGUMENT', 'since must be earlier than or equal to until'],
      ['blank query in list mode', { query: '   ' }, 400, 'INVALID_ARGUMENT', 'Search query or image_url must not be empty.'],
      ['missing query in list mode', {}, 400, 'INVALID_ARGUMENT', 'Search query or image_url must not be empty.'],
      ['bad image scheme', { query: 'q', image_url: 'ftp://x' }, 400, 'INVALID_ARGUMENT', 'image_url must be a data:image base64 URI, http(s) URL, or viking:// URI.'],
      [
        'malformed viking image',
        { query: 'q', mode: 'context', image_url: 'viking://user/memories/x.png' },
        400,
        'INVALID_URI',
        'Invalid URI: viking://user/memories/x.png (the uid-less form viking://user/<path> was removed; use viking://user/{user_id}/<path> or viking://~/<path>)',
      ],
      ['bad exclude_uris item', { query: 'q', mode: 'context', exclude_uris: ['viking://nowhere/x'] }, 400, 'INVALID_URI', "Invalid URI: viking://nowhere/x (unknown scope 'nowhere'; expected one of resources, user, agent, session)"],
      ['bad list-mode target_uri', { query: 'q', target_uri: 'resources/x' }, 400, 'INVALID_URI', 'Invalid URI: resources/x (URI must start with viking://)'],
    ])('%s', (_t, body, status, code, message) => {
      expect(outcome(() => search(body))).toEqual([status, code, message]);
    });

    it('rejects telemetry with unknown options naming them', () => {
      const [status, code, message] = outcome(() => search({ query: 'q', mode: 'context', telemetry: { summary: false, events: true } }));
      expect([status, code]).toEqual([400, 'INVALID_ARGUMENT']);
      expect(message).toContain('events');
    });

    it('rejects invalid tags', () => {
      const [status, code, message] = outcome(() => search({ query: 'q', tags: ['env'] }));
      expect([status, code]).toEqual([400, 'INVALID_ARGUMENT']);
      expect(message).toContain("'env'");
    });

    it('rejects an unparsable since', () => {
      expect(outcome(() => search({ query: 'q', since: 'last week' })).slice(0, 2)).toEqual([400, 'INVALID_ARGUMENT']);
    });

    it('answers 403 for another user’s space as a plain user', () => {
      const [status, code, message] = outcome(() => validateSearchBody({ query: 'q', target_uri: 'viking://user/bob' }, { identity: { userId: 'alice', role: 'user' }, nowMs: NOW }));
      expect([status, code]).toEqual([403, 'PERMISSION_DENIED']);
      expect(message).toContain('Access denied');
    });

    it('does not reject a blank query in context mode (gathering does, if it searches)', () => {
      expect(context({}).query).toBe('');
      expect(context({ query: '  ', quotas: {} }).quotas).toEqual({});
    });
  });

  describe('legacy-detection words (plugin-client §1.3, §8)', () => {
    it.each<[string, object]>([
      ['unknown quota keys', { quotas: { bogus: 1 } }],
      ['unknown detail keys', { detail: { bogus: 'full' } }],
      ['bad detail value', { detail: { events: 'huge' } }],
      ['bad context_type', { context_type: 'doc' }],
      ['bad tag', { tags: ['nope'] }],
      ['bad since', { since: 'someday' }],
      ['since after until', { since: '2d', until: '3d' }],
      ['bad exclude uri', { exclude_uris: ['viking://user/memories/x'] }],
      ['bad image', { image_url: 'ftp://x' }],
      ['telemetry option', { telemetry: { events: true } }],
      ['range', { max_tokens: 20 }],
      ['too many excludes', { exclude_uris: Array(201).fill('viking://resources/a') }],
    ])('a context-mode %s error avoids "mode", "extra" and "unexpected"', (_t, extra) => {
      const [status, , message] = outcome(() => search({ query: 'q', mode: 'context', ...extra }));
      expect(status).toBe(400);
      expect(message.toLowerCase()).not.toMatch(/mode|extra|unexpected/);
    });
  });

  describe('list mode', () => {
    it('applies the defaults', () => {
      expect(search({ query: 'q' })).toEqual({
        mode: 'list',
        params: {
          query: 'q',
          imageUrl: null,
          targetUris: [],
          filter: null,
          limit: 10,
          scoreThreshold: null,
          includeProvenance: false,
          levels: null,
          telemetry: false,
          sessionId: null,
        },
      });
    });

    it('resolves targets, levels, filter, node_limit and session', () => {
      expect(
        search({
          query: 'q',
          target_uri: ['viking://~/memories', 'viking://~/skills'],
          node_limit: 3,
          limit: 20,
          level: '0,2',
          context_type: 'memory',
          score_threshold: 0,
          include_provenance: true,
          session_id: 's',
          telemetry: { summary: true },
        }),
      ).toEqual({
        mode: 'list',
        params: {
          query: 'q',
          imageUrl: null,
          targetUris: ['viking://user/default/memories', 'viking://user/default/skills'],
          filter: { op: 'must', field: 'context_type', conds: ['memory'] },
          limit: 3,
          scoreThreshold: 0,
          includeProvenance: true,
          levels: [0, 2],
          telemetry: true,
          sessionId: 's',
        },
      });
    });

    it('accepts an image instead of a query', () => {
      const r = search({ image_url: 'data:image/png;base64,AA' });
      expect(r.mode === 'list' && r.params.imageUrl).toBe('data:image/png;base64,AA');
    });
  });

  describe('context mode', () => {
    it('normalises the §1.6 example body to flat defaults', () => {
      const p = context({ query: 'what shipped' });
      expect(p).toEqual({
        query: 'what shipped',
        imageUrl: null,
        filter: null,
        limit: 10,
        scoreThreshold: null,
        sessionId: null,
        queryExpansion: 'auto',
        maxTokens: 1600,
        quotas: null,
        purpose: null,
        detail: null,
        dedupTurns: 0,
        excludeUris: [],
        peerScope: 'all',
        otherPeerPenalties: D_PENALTIES,
        rewrite: 'off',
        rewriteMaxBullets: 6,
        tokenizer: 'estimate',
        ignored: [],
        timeBudgetMs: null,
        render: true,
        packing: null,
        telemetry: false,
      });
    });

    it.each<[string, object, Partial<ContextParams>]>([
      [
        'plugin default body',
        { query: 'what did we deploy?', purpose: 'coding', score_threshold: 0.35, session_id: 'cc-s1', dedup_turns: 5, rewrite: 'auto' },
        {
          purpose: 'coding',
          quotas: { events: 1, entities: 2, preferences: 1, experiences: 1, resources: 3, skills: 2 },
          scoreThreshold: 0.35,
          sessionId: 'cc-s1',
          dedupTurns: 5,
          rewrite: 'auto',
        },
      ],
      [
        'plugin body with overrides',
        {
          query: '…',
          purpose: 'coding',
          score_threshold: 0.35,
          quotas: { events: 1, entities: 1, preferences: 1, experiences: 1, resources: 1, skills: 1 },
          max_tokens: 900,
          session_id: 'cc-s1',
          query_expansion: 'off',
          dedup_turns: 5,
        },
        { quotas: { events: 1, entities: 1, preferences: 1, experiences: 1, resources: 1, skills: 1 }, maxTokens: 900, queryExpansion: 'off' },
      ],
      ['rewrite true means on', { query: 'q', rewrite: true, rewrite_max_bullets: 3 }, { rewrite: 'on', rewriteMaxBullets: 3 }],
      ['rewrite false means off', { query: 'q', rewrite: false }, { rewrite: 'off' }],
      ['target_uri "" and [] are accepted', { query: 'q', target_uri: '' }, { quotas: null }],
      ['detail auto means no pin', { query: 'q', detail: 'auto' }, { detail: null }],
      ['detail scalar pin', { query: 'q', detail: 'overview' }, { detail: 'overview' }],
      ['detail object with memories', { query: 'q', detail: { memories: 'full', events: 'abstract' } }, { detail: { memories: 'full', events: 'abstract' } }],
      ['quotas {} is bucketed with no bucket', { query: 'q', quotas: {} }, { quotas: {} }],
      ['quotas override purpose', { query: 'q', quotas: { skills: 2 }, purpose: 'chat' }, { quotas: { skills: 2 }, purpose: 'chat' }],
      ['chat preset', { query: 'q', purpose: 'chat' }, { quotas: { events: 3, entities: 3, preferences: 1, experiences: 1, resources: 1, skills: 1 } }],
      ['penalty scalar', { query: 'q', other_peer_penalty: 0.5 }, { otherPeerPenalties: Object.fromEntries(Object.keys(D_PENALTIES).map((k) => [k, 0.5])) as ContextParams['otherPeerPenalties'] }],
      ['penalty object', { query: 'q', other_peer_penalty: { events: 2, nope: 1 } }, { otherPeerPenalties: { ...D_PENALTIES, events: 1 } }],
      ['tokenizer and time budget', { query: 'q', tokenizer: 'o200k_base', time_budget_ms: 750 }, { tokenizer: 'o200k_base', timeBudgetMs: 750 }],
      ['packing evidence', { query: 'q', packing: 'evidence' }, { packing: 'evidence' }],
      ['packing compat', { query: 'q', packing: 'compat' }, { packing: 'compat' }],
      ['peer scope actor', { query: 'q', peer_scope: 'actor' }, { peerScope: 'actor' }],
      ['image forwarded', { query: '', image_url: 'viking://~/resources/p.png' }, { imageUrl: 'viking://user/default/resources/p.png' }],
      [
        'exclude_uris normalised',
        { query: 'q', exclude_uris: [' viking://~/memories/events/a.md ', ''] },
        { excludeUris: ['viking://user/default/memories/events/a.md'] },
      ],
      [
        'filter compiled from tags (spec example)',
        { query: 'q', tags: ['Env=Prod', ' env=prod ', 'team=Search'] },
        {
          filter: {
            op: 'and',
            conds: [
              { op: 'must', field: 'search_tags', conds: ['env=prod'] },
              { op: 'must', field: 'search_tags', conds: ['team=search'] },
            ],
          },
        },
      ],
      ['time filter with injected now', { query: 'q', since: '2h' }, { filter: { op: 'time_range', field: 'updated_at', gte: Date.parse('2026-07-14T10:00:00.000Z') } }],
      ['telemetry summary', { query: 'q', telemetry: { summary: true } }, { telemetry: true }],
    ])('%s', (_t, body, expected) => {
      expect(context(body)).toMatchObject(expected);
    });

    it.each<[string, object, string[]]>([
      ['nothing sent', { query: 'q' }, []],
      ['level sent', { query: 'q', level: 2 }, ['level']],
      ['level null is not sent', { query: 'q', level: null }, []],
      ['limit in flat mode is used', { query: 'q', limit: 5 }, []],
      ['limit while bucketed', { query: 'q', purpose: 'coding', limit: 5 }, ['limit']],
      ['node_limit while bucketed', { query: 'q', quotas: { events: 1 }, node_limit: 5 }, ['limit']],
      ['both, in order', { query: 'q', quotas: {}, limit: 5, level: '0,1' }, ['level', 'limit']],
    ])('stats.ignored: %s', (_t, body, ignored) => {
      expect(context(body).ignored).toEqual(ignored);
    });

    it('uses node_limit over limit for the flat row count', () => {
      expect(context({ query: 'q', limit: 20, node_limit: 4 }).limit).toBe(4);
    });
  });
});

describe('validateFindBody', () => {
  it('accepts the raw find fallback body of the plugins', () => {
    expect(validateFindBody({ query: 'q', target_uri: 'viking://~/memories', limit: 20, score_threshold: 0 }, dev)).toEqual({
      query: 'q',
      imageUrl: null,
      targetUris: ['viking://user/default/memories'],
      filter: null,
      limit: 20,
      scoreThreshold: 0,
      includeProvenance: false,
      levels: null,
      telemetry: false,
    });
  });

  it.each<[string, unknown, string]>([
    ['session_id is not a find field', { query: 'q', session_id: 's' }, `${P}body.session_id: Extra inputs are not permitted`],
    ['mode is not a find field', { query: 'q', mode: 'context' }, `${P}body.mode: Extra inputs are not permitted`],
    ['a context-only field', { query: 'q', max_tokens: 100 }, `${P}body.max_tokens: Extra inputs are not permitted`],
    ['blank query', { query: '' }, 'Search query or image_url must not be empty.'],
  ])('rejects %s', (_t, body, message) => {
    const [status, code, msg] = outcome(() => validateFindBody(body, dev));
    expect([status, code, msg]).toEqual([400, 'INVALID_ARGUMENT', message]);
  });

  // Gathering used to check the effective filter, after every check of the gateway: the gateway
  // checks it last, so a body with several problems reports the same one first.
  it('checks the filter tree last: a blank query, a bad level or as_of is reported before a bad filter', () => {
    const bad = { op: 'must', field: 'colour', conds: ['red'] };
    expect(outcome(() => validateFindBody({ query: 'q', filter: bad }, dev))).toEqual([400, 'INVALID_ARGUMENT', expect.stringMatching(/^filter: unsupported filter field "colour"/)]);
    expect(outcome(() => validateFindBody({ query: '', filter: bad }, dev))[2]).toBe('Search query or image_url must not be empty.');
    expect(outcome(() => validateFindBody({ query: 'q', level: 'x', filter: bad }, dev))[2]).toMatch(/^level must be an integer/);
    expect(outcome(() => validateFindBody({ query: 'q', as_of: 'soon', filter: bad }, dev))[2]).toMatch(/body\.as_of/);
    expect(outcome(() => search({ query: 'q', mode: 'context', as_of: 'soon', filter: bad }))[2]).toMatch(/body\.as_of/);
    expect(outcome(() => search({ query: 'q', mode: 'context', filter: bad }))[2]).toMatch(/^filter: unsupported filter field "colour"/);
  });
});

describe('any filter tree', () => {
  // Regression: a node that is not an object inside an "and" reached `null.op` while nested
  // ands were flattened (a TypeError: HTTP 500). Every tree is accepted or a 400, never a throw
  // of anything else.
  const leaf = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant([]), fc.constant({}), fc.constantFrom('memory', '2026-01-01', 'viking://resources'));
  const tree = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.record(
        {
          op: fc.constantFrom('and', 'or', 'must', 'must_not', 'range', 'time_range', 'prefix', 'near'),
          field: fc.oneof(fc.constantFrom('context_type', 'uri', 'level', 'updated_at', 'search_tags', 'colour'), leaf),
          conds: fc.oneof(fc.array(tie('node'), { maxLength: 3 }), leaf),
          gte: leaf,
          lte: leaf,
        },
        { requiredKeys: ['op'] },
      ),
    ),
  })).node;
  const settles = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof RequestValidationError || e instanceof DomainError)) throw e;
      expect(e.status).toBe(400);
    }
  };

  it('is accepted or answered 400 by find, list and context mode', () => {
    fc.assert(
      fc.property(tree, fc.option(fc.constantFrom('memory', 'resource'), { nil: undefined }), (filter, contextType) => {
        settles(() => validateFindBody({ query: 'q', filter, context_type: contextType }, dev));
        settles(() => search({ query: 'q', filter, context_type: contextType }));
        settles(() => search({ query: 'q', mode: 'context', filter, context_type: contextType }));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    [{ op: 'and', conds: [null] }, 'filter.conds[0]'],
    [{ op: 'and', conds: [{ op: 'and', conds: [7] }] }, 'filter.conds[0].conds[0]'],
  ])('names where a node that is not an object sits in the client\'s tree: %j', (filter, where) => {
    expect(outcome(() => validateFindBody({ query: 'q', filter, context_type: 'memory' }, dev))).toEqual([400, 'INVALID_ARGUMENT', `${where}: a filter node must be an object`]);
  });
});

describe('validateRecallBody', () => {
  it.each<[string, unknown, string]>([
    ['missing query', {}, 'body.query: Field required'],
    ['max_chars null', { query: 'q', max_chars: null }, 'body.max_chars: Input should be a valid integer'],
    ['min_score null', { query: 'q', min_score: null }, 'body.min_score: Input should be a valid number'],
    ['render not bool/full/compact', { query: 'q', render: 'short' }, 'body.render.bool: Input should be a valid boolean, unable to interpret input'],
    ['max_tokens out of range', { query: 'q', max_tokens: 40000 }, 'body.max_tokens: Input should be less than or equal to 32000'],
    ['dedup_turns out of range', { query: 'q', dedup_turns: 101 }, 'body.dedup_turns: Input should be less than or equal to 100'],
    ['unknown quota keys', { query: 'q', quotas: { skillz: 1 } }, `body: Value error, unknown quota keys: skillz; ${QUOTA_ALLOWED}`],
    ['unknown detail keys', { query: 'q', detail: { nope: 'full' } }, `body: Value error, unknown detail keys: nope; ${DETAIL_ALLOWED}`],
    ['unknown packing', { query: 'q', packing: 'dense' }, "body.packing: Input should be 'compat' or 'evidence'"],
    ...['limit', 'node_limit', 'filter', 'image_url', 'target_uri', 'mode', 'context_type', 'tags', 'since', 'until', 'time_field', 'level', 'include_provenance'].map(
      (f) => [`${f} is not a recall field`, { query: 'q', [f]: null }, `body.${f}: Extra inputs are not permitted`] as [string, unknown, string],
    ),
  ])('rejects %s', (_t, body, msg) => {
    expect(outcome(() => recall(body))).toEqual([400, 'INVALID_ARGUMENT', P + msg]);
  });

  it('rejects an invalid exclude_uris item with INVALID_URI', () => {
    expect(outcome(() => recall({ query: 'q', exclude_uris: ['nope'] })).slice(0, 2)).toEqual([400, 'INVALID_URI']);
  });

  it('rejects telemetry options other than summary', () => {
    const [, code, msg] = outcome(() => recall({ query: 'q', telemetry: { summary: false, events: true } }));
    expect(code).toBe('INVALID_ARGUMENT');
    expect(msg).toContain('events');
  });

  it.each<[number, number]>([
    [6500, 1625],
    [1600, 400],
    [6502, 1626],
    [6506, 1626],
    [0, 64],
    [-5, 64],
    [200000, 50000],
  ])('folds max_chars %p into max_tokens %p', (maxChars, maxTokens) => {
    expect(recall({ query: 'q', max_chars: maxChars }).maxTokens).toBe(maxTokens);
  });

  it('applies the server recall profile', () => {
    const p = recall({ query: 'q' });
    expect(p).toMatchObject({
      maxTokens: 1600,
      scoreThreshold: 0.1,
      purpose: 'coding',
      dedupTurns: 0,
      queryExpansion: 'auto',
      peerScope: 'all',
      quotas: { events: 10, entities: 10, preferences: 3, experiences: 0 },
      limit: 10,
      filter: null,
      imageUrl: null,
      render: true,
      detail: null,
      ignored: [],
      telemetry: false,
    });
    expect(p.deprecated).toEqual({
      endpoint: '/api/v1/search/recall',
      successor: '/api/v1/search/search',
      successor_body: { mode: 'context' },
      aliases_used: [],
    });
  });

  it('passes packing through the recall folding (null when absent: the server default), and keeps it out of aliases_used', () => {
    expect(recall({ query: 'q' }).packing).toBeNull();
    const p = recall({ query: 'q', packing: 'evidence' });
    expect(p.packing).toBe('evidence');
    expect(p.deprecated.aliases_used).toEqual([]);
  });

  it('overlays quotas {"events":5} on the v1 defaults in order', () => {
    expect(Object.entries(recall({ query: 'q', quotas: { events: 5 } }).quotas!)).toEqual([
      ['events', 5],
      ['entities', 10],
      ['preferences', 3],
      ['experiences', 0],
    ]);
  });

  it('accepts the plugin fallback body', () => {
    const p = recall({
      query: 'q',
      quotas: { events: 5, entities: 4, preferences: 1, experiences: 0 },
      max_chars: 5000,
      min_score: 0.35,
      render: true,
      peer_scope: 'actor',
    });
    expect(p).toMatchObject({ maxTokens: 1250, scoreThreshold: 0.35, peerScope: 'actor', render: true });
    expect(p.deprecated.aliases_used).toEqual(['max_chars', 'min_score', 'render']);
  });

  it('maps render:false, "compact", sessions and dedup', () => {
    expect(recall({ query: 'q', render: false }).render).toBe(false);
    expect(recall({ query: 'q', render: 'compact' }).detail).toBe('abstract');
    expect(recall({ query: 'q', session_id: 'cc-1' }).dedupTurns).toBe(5);
    expect(recall({ query: 'q', session_id: 'cc-1', dedup_turns: null }).dedupTurns).toBe(5);
    expect(recall({ query: 'q', quotas: null, purpose: 'chat' }).quotas).toEqual({ events: 3, entities: 3, preferences: 1, experiences: 1, resources: 1, skills: 1 });
  });

  it('normalises exclude_uris', () => {
    expect(recall({ query: 'q', exclude_uris: ['viking://~/memories/events/x.md', ''] }).excludeUris).toEqual(['viking://user/default/memories/events/x.md']);
  });
});

describe('validated parameters drive gathering', () => {
  type Call = SearchCall<unknown>;

  function gatherParams(p: ContextParams, identity: Pick<Identity, 'userId' | 'role' | 'actorPeerId'>): GatherParams {
    return {
      queries: planQueries([p.query]),
      userId: identity.userId,
      role: identity.role,
      actorPeerId: identity.actorPeerId,
      quotas: p.quotas,
      limit: p.limit,
      peerScope: p.peerScope,
      filter: p.filter,
      scoreThreshold: p.scoreThreshold,
      imageUrl: p.imageUrl,
      excluded: p.excludeUris,
      penalties: p.otherPeerPenalties,
    };
  }

  const recorder = () => {
    const calls: Array<[string, number, boolean, unknown]> = [];
    const fn = async (c: Call): Promise<SearchLists> => {
      calls.push([c.targetUri, c.limit, c.openContext, c.scoreThreshold]);
      return { memories: [], resources: [], skills: [] };
    };
    return { calls, fn };
  };

  it('makes the §9.5 calls for a recall with actor peer "current"', async () => {
    const p = recall({ query: 'peer memory', quotas: { events: 3, entities: 0, preferences: 0, experiences: 0 }, max_chars: 5000 });
    const s = recorder();
    await gatherCandidates(gatherParams(p, { userId: 'default', role: 'root', actorPeerId: 'current' }), s.fn);
    expect(s.calls).toEqual([
      ['viking://user/default/memories/events', 3, false, 0.1],
      ['viking://user/default/peers/current/memories/events', 3, false, 0.1],
      ['viking://user/default/peers', 12, true, 0.1],
    ]);
  });

  it('makes the §1.6 flat calls for {"query":"what shipped","mode":"context"}', async () => {
    const s = recorder();
    await gatherCandidates(gatherParams(context({ query: 'what shipped' }), { userId: 'default', role: 'root', actorPeerId: null }), s.fn);
    expect(s.calls).toEqual([
      ['', 10, false, null],
      ['viking://user/default/peers', 40, true, null],
    ]);
  });

  it('turns {"mode":"context"} into a 400 once a retrieval call is made, but not with quotas {}', async () => {
    const s = recorder();
    const err = await gatherCandidates(gatherParams(context({}), { userId: 'default', role: 'root', actorPeerId: null }), s.fn).then(
      () => null,
      (e: unknown) => e,
    );
    const d = toDomainError(err);
    expect([d?.status, d?.code, d?.message]).toEqual([400, 'INVALID_ARGUMENT', 'Search query or image_url must not be empty.']);
    const empty = await gatherCandidates(gatherParams(context({ quotas: {} }), { userId: 'default', role: 'root', actorPeerId: null }), s.fn);
    expect(empty.candidates).toEqual([]);
    expect(s.calls).toEqual([]);
  });

  it('forwards the resolved image_url on every call', async () => {
    const p = context({ query: '', image_url: 'viking://~/resources/p.png', quotas: { events: 1, skills: 1 } });
    const seen: unknown[] = [];
    await gatherCandidates(gatherParams(p, { userId: 'default', role: 'root', actorPeerId: null }), async (c) => {
      seen.push(c.imageUrl);
      return { memories: [], resources: [], skills: [] };
    });
    expect(seen).toEqual(Array(4).fill('viking://user/default/resources/p.png'));
  });
});
