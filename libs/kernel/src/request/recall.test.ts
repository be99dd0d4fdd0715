import { DEFAULT_OTHER_PEER_PENALTIES } from './penalties';
import { PURPOSE_PRESETS } from './quotas';
import { foldRecall, maxTokensFromChars, type RecallInput } from './recall';

const fold = (extra: Partial<RecallInput> = {}) => foldRecall({ query: 'q', ...extra });

describe('maxTokensFromChars', () => {
  it.each<[number, number]>([
    [6500, 1625],
    [1600, 400],
    [6502, 1626],
    [6506, 1626],
    [6510, 1628],
    [0, 64],
    [-400, 64],
    [255, 64],
    [258, 64],
    [262, 66],
    [200000, 50000],
    [5000, 1250],
  ])('max_chars %p → max_tokens %p (banker’s rounding, floor 64, no cap)', (chars, tokens) => {
    expect(maxTokensFromChars(chars)).toBe(tokens);
  });
});

describe('foldRecall', () => {
  describe('max_tokens', () => {
    it.each<[string, Partial<RecallInput>, number]>([
      ['omitted max_chars gives 1600, not 1625', {}, 1600],
      ['max_chars folds', { max_chars: 6502 }, 1626],
      ['explicit max_tokens wins over max_chars', { max_tokens: 900, max_chars: 6500 }, 900],
      ['explicit null max_tokens falls back to max_chars', { max_tokens: null, max_chars: 6506 }, 1626],
      ['explicit null max_tokens and no max_chars → 1600', { max_tokens: null }, 1600],
      ['a huge max_chars is not capped', { max_chars: 200000 }, 50000],
    ])('%s', (_t, input, expected) => {
      expect(fold(input).request.maxTokens).toBe(expected);
    });
  });

  describe('score_threshold', () => {
    it.each<[string, Partial<RecallInput>, number]>([
      ['default 0.1 (never 0.35)', {}, 0.1],
      ['min_score alias', { min_score: 0.35 }, 0.35],
      ['min_score 0 is kept', { min_score: 0 }, 0],
      ['explicit score_threshold wins', { score_threshold: 0.5, min_score: 0.2 }, 0.5],
      ['explicit null score_threshold falls back to min_score', { score_threshold: null, min_score: 0.2 }, 0.2],
      ['explicit null and no alias → 0.1', { score_threshold: null }, 0.1],
    ])('%s', (_t, input, expected) => {
      expect(fold(input).request.scoreThreshold).toBe(expected);
    });
  });

  describe('render and detail', () => {
    it.each<[string, Partial<RecallInput>, boolean, unknown]>([
      ['default renders, no pin', {}, true, null],
      ['render false → entries only', { render: false }, false, null],
      ['render "full" renders', { render: 'full' }, true, null],
      ['render "compact" pins abstract', { render: 'compact' }, true, 'abstract'],
      ['explicit detail beats compact', { render: 'compact', detail: 'full' }, true, 'full'],
      ['explicit "auto" detail is no pin, even with compact', { render: 'compact', detail: 'auto' }, true, null],
      ['explicit null detail lets compact apply', { render: 'compact', detail: null }, true, 'abstract'],
      ['object detail passes through', { detail: { events: 'overview' } }, true, { events: 'overview' }],
    ])('%s', (_t, input, render, detail) => {
      const { request } = fold(input);
      expect(request.render).toBe(render);
      expect(request.detail).toEqual(detail);
    });
  });

  describe('quotas and purpose', () => {
    it('absent quotas → v1 defaults in order', () => {
      const { request } = fold();
      expect(Object.entries(request.quotas!)).toEqual([
        ['events', 10],
        ['entities', 10],
        ['preferences', 3],
        ['experiences', 0],
      ]);
      expect(request.purpose).toBe('coding');
    });

    it('an object overlays the defaults, keeping the default key order', () => {
      expect(Object.entries(fold({ quotas: { events: 5 } }).request.quotas!)).toEqual([
        ['events', 5],
        ['entities', 10],
        ['preferences', 3],
        ['experiences', 0],
      ]);
    });

    it('new keys come after the four defaults', () => {
      expect(Object.entries(fold({ quotas: { skills: 2, experiences: 1 } }).request.quotas!)).toEqual([
        ['events', 10],
        ['entities', 10],
        ['preferences', 3],
        ['experiences', 1],
        ['skills', 2],
      ]);
    });

    it('negative overlay values clamp to 0', () => {
      expect(fold({ quotas: { events: -2 } }).request.quotas!.events).toBe(0);
    });

    it.each<[string, Partial<RecallInput>, Record<string, number>, string]>([
      ['explicit null → the coding preset', { quotas: null }, { ...PURPOSE_PRESETS.coding }, 'coding'],
      ['explicit null with purpose chat → the chat preset', { quotas: null, purpose: 'chat' }, { ...PURPOSE_PRESETS.chat }, 'chat'],
      ['explicit null purpose → coding', { quotas: null, purpose: null }, { ...PURPOSE_PRESETS.coding }, 'coding'],
    ])('%s', (_t, input, quotas, purpose) => {
      const { request } = fold(input);
      expect(request.quotas).toEqual(quotas);
      expect(request.purpose).toBe(purpose);
    });
  });

  describe('dedup_turns, expansion, peer scope and pass-through', () => {
    it.each<[string, Partial<RecallInput>, number]>([
      ['no session → 0', {}, 0],
      ['a session → 5', { session_id: 's1' }, 5],
      ['an empty session id is falsy → 0', { session_id: '' }, 0],
      ['explicit value wins', { session_id: 's1', dedup_turns: 2 }, 2],
      ['explicit 0 wins over the session default', { session_id: 's1', dedup_turns: 0 }, 0],
      ['explicit null → session default', { session_id: 's1', dedup_turns: null }, 5],
    ])('dedup_turns: %s', (_t, input, expected) => {
      expect(fold(input).request.dedupTurns).toBe(expected);
    });

    it('defaults the rest like the server profile', () => {
      const { request } = fold();
      expect(request).toMatchObject({
        query: 'q',
        imageUrl: null,
        filter: null,
        limit: 10,
        sessionId: null,
        queryExpansion: 'auto',
        peerScope: 'all',
        excludeUris: [],
        rewrite: 'off',
        rewriteMaxBullets: 6,
        tokenizer: 'estimate',
        ignored: [],
        timeBudgetMs: null,
      });
      expect(request.otherPeerPenalties).toEqual(DEFAULT_OTHER_PEER_PENALTIES);
    });

    it('passes explicit values through', () => {
      const { request } = fold({
        query_expansion: 'off',
        peer_scope: 'actor',
        other_peer_penalty: 0.4,
        exclude_uris: ['viking://resources/a.md'],
        rewrite: 'auto',
        rewrite_max_bullets: 3,
        tokenizer: 'o200k_base',
        time_budget_ms: 800,
        session_id: 's',
      });
      expect(request).toMatchObject({
        queryExpansion: 'off',
        peerScope: 'actor',
        excludeUris: ['viking://resources/a.md'],
        rewrite: 'auto',
        rewriteMaxBullets: 3,
        tokenizer: 'o200k_base',
        timeBudgetMs: 800,
        sessionId: 's',
      });
      expect(request.otherPeerPenalties.skills).toBe(0.4);
    });

    it('null query_expansion means auto', () => {
      expect(fold({ query_expansion: null }).request.queryExpansion).toBe('auto');
    });

    it('rewrite true means always attempt', () => {
      expect(fold({ rewrite: true }).request.rewrite).toBe('on');
    });
  });

  describe('stats.deprecated', () => {
    it.each<[string, Partial<RecallInput>, string[]]>([
      ['no alias', {}, []],
      ['presence counts, not value: render true', { render: true }, ['render']],
      ['fixed order whatever the body order', { render: 'compact', min_score: 0.2, max_chars: 100 }, ['max_chars', 'min_score', 'render']],
      ['min_score only', { min_score: 0.1 }, ['min_score']],
    ])('%s', (_t, input, aliases) => {
      expect(fold(input).deprecated).toEqual({
        endpoint: '/api/v1/search/recall',
        successor: '/api/v1/search/search',
        successor_body: { mode: 'context' },
        aliases_used: aliases,
      });
    });
  });

  it('folds the §9.5 example', () => {
    const { request, deprecated } = foldRecall({
      query: 'peer memory',
      quotas: { events: 3, entities: 0, preferences: 0, experiences: 0 },
      max_chars: 5000,
    });
    expect(request.maxTokens).toBe(1250);
    expect(request.quotas).toEqual({ events: 3, entities: 0, preferences: 0, experiences: 0 });
    expect(request.scoreThreshold).toBe(0.1);
    expect(request.purpose).toBe('coding');
    expect(request.peerScope).toBe('all');
    expect(deprecated.aliases_used).toEqual(['max_chars']);
  });
});
