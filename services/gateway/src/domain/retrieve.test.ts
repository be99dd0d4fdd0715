import { RequestValidationError } from './errors';
import { validateFindBody, validateSearchBody, type RequestContext } from './requests';
import { parseAsOf, validateRetrieveBody } from './retrieve';

/** The first issue of a thrown validation error, as [loc, type]. */
function issue(fn: () => unknown): [string, string, string] {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof RequestValidationError)) throw e;
    return [e.issues[0].loc.join('.'), e.issues[0].type, e.message];
  }
  throw new Error('expected a throw');
}

describe('validateRetrieveBody', () => {
  it('applies the contract defaults', () => {
    expect(validateRetrieveBody({ query: 'rollback' })).toEqual({
      query: 'rollback',
      workspace: null,
      subject: null,
      topK: 8,
      memoryK: 5,
      mmrLambda: null,
      maxPerDocument: 2,
      asOfMs: null,
      tokenBudget: null,
      timeBudgetMs: null,
      stages: {},
      tokenizer: 'estimate',
    });
  });

  it('takes every field', () => {
    expect(
      validateRetrieveBody({
        query: 'q',
        workspace: 'proj-1',
        subject: 'bob@example.com',
        top_k: 100,
        memory_k: 0,
        mmr_lambda: 0.5,
        max_per_document: 1,
        as_of: '2026-03-01',
        token_budget: 500,
        time_budget_ms: 1000,
        stages: { rerank: false, graph_assist: true },
        tokenizer: 'o200k_base',
      }),
    ).toEqual({
      query: 'q',
      workspace: 'proj-1',
      subject: 'bob@example.com',
      topK: 100,
      memoryK: 0,
      mmrLambda: 0.5,
      maxPerDocument: 1,
      asOfMs: Date.parse('2026-03-01T00:00:00.000Z'),
      tokenBudget: 500,
      timeBudgetMs: 1000,
      stages: { rerank: false, graph_assist: true },
      tokenizer: 'o200k_base',
    });
  });

  it('accepts the ends of every range', () => {
    expect(validateRetrieveBody({ query: 'q', top_k: 1, mmr_lambda: 0, token_budget: 1, time_budget_ms: 1 })).toMatchObject({ topK: 1, mmrLambda: 0, tokenBudget: 1, timeBudgetMs: 1 });
    expect(validateRetrieveBody({ query: 'q', memory_k: 100, mmr_lambda: 1 })).toMatchObject({ memoryK: 100, mmrLambda: 1 });
  });

  it('refuses a missing or blank query', () => {
    expect(issue(() => validateRetrieveBody({}))).toEqual(['body.query', 'missing', 'Invalid request parameters: body.query: Field required']);
    expect(issue(() => validateRetrieveBody({ query: '  ' }))[0]).toBe('body.query');
  });

  it.each([
    [{ top_k: 0 }, 'body.top_k', 'greater_than_equal'],
    [{ top_k: 101 }, 'body.top_k', 'less_than_equal'],
    [{ memory_k: -1 }, 'body.memory_k', 'greater_than_equal'],
    [{ memory_k: 101 }, 'body.memory_k', 'less_than_equal'],
    [{ mmr_lambda: 1.01 }, 'body.mmr_lambda', 'less_than_equal'],
    [{ mmr_lambda: -0.1 }, 'body.mmr_lambda', 'greater_than_equal'],
    [{ mmr_lambda: 'nan' }, 'body.mmr_lambda', 'finite_number'],
    [{ max_per_document: 0 }, 'body.max_per_document', 'greater_than_equal'],
    [{ token_budget: 0 }, 'body.token_budget', 'greater_than_equal'],
    [{ time_budget_ms: 0 }, 'body.time_budget_ms', 'greater_than_equal'],
    [{ top_k: 2.5 }, 'body.top_k', 'int_from_float'],
    [{ tokenizer: 'gpt2' }, 'body.tokenizer', 'literal_error'],
    [{ workspace: '../x' }, 'body.workspace', 'value_error'],
    [{ subject: 'a/b' }, 'body.subject', 'value_error'],
    [{ as_of: 'yesterday' }, 'body.as_of', 'value_error'],
    [{ as_of: '7d' }, 'body.as_of', 'value_error'],
    [{ stages: { rerank: 'maybe' } }, 'body.stages.rerank', 'bool_parsing'],
    [{ stages: { rerank: true, bogus: true } }, 'body.stages.bogus', 'extra_forbidden'],
    [{ stages: [] }, 'body.stages', 'model_attributes_type'],
    [{ bogus: 1 }, 'body.bogus', 'extra_forbidden'],
  ])('refuses %j naming %s', (extra, loc, type) => {
    const [l, t, message] = issue(() => validateRetrieveBody({ query: 'q', ...extra }));
    expect([l, t]).toEqual([loc, type]);
    expect(message).toContain(loc);
  });

  it('treats null optional fields as absent', () => {
    expect(validateRetrieveBody({ query: 'q', workspace: null, subject: null, mmr_lambda: null, as_of: null, token_budget: null, time_budget_ms: null })).toMatchObject({
      workspace: null,
      subject: null,
      mmrLambda: null,
      asOfMs: null,
      tokenBudget: null,
      timeBudgetMs: null,
    });
  });
});

describe('parseAsOf', () => {
  it('normalises ISO-8601 dates and timestamps to UTC milliseconds, blank to null', () => {
    expect(parseAsOf('2026-07-01')).toBe(Date.parse('2026-07-01T00:00:00.000Z'));
    expect(parseAsOf('2026-07-01T12:30:00Z')).toBe(Date.parse('2026-07-01T12:30:00.000Z'));
    expect(parseAsOf('2026-07-01T12:30:00+02:00')).toBe(Date.parse('2026-07-01T10:30:00.000Z'));
    expect(parseAsOf('2026-07-01T12:30:00.123456')).toBe(Date.parse('2026-07-01T12:30:00.123Z'));
    expect(parseAsOf('  ')).toBeNull();
    expect(parseAsOf(null)).toBeNull();
  });
  it('refuses anything else, naming the location it was given', () => {
    expect(issue(() => parseAsOf('2026-13-01'))).toEqual(['body.as_of', 'value_error', expect.stringContaining('as_of must be an ISO-8601')]);
    expect(issue(() => parseAsOf('soon', ['body', 'x']))[0]).toBe('body.x');
  });
});

describe('as_of on /find and /search', () => {
  const ctx: RequestContext = { identity: { userId: 'default', role: 'root' }, nowMs: Date.UTC(2026, 6, 14) };

  it('is accepted by /find and both /search modes, normalised, and absent means now', () => {
    expect(validateFindBody({ query: 'q', as_of: '2026-03-01' }, ctx).asOfMs).toBe(Date.parse('2026-03-01T00:00:00.000Z'));
    expect(validateFindBody({ query: 'q' }, ctx).asOfMs).toBeUndefined();
    const list = validateSearchBody({ query: 'q', as_of: '2026-03-01T10:00:00Z' }, ctx);
    expect(list.mode === 'list' && list.params.asOfMs).toBe(Date.parse('2026-03-01T10:00:00.000Z'));
    const context = validateSearchBody({ query: 'q', mode: 'context', as_of: '2026-03-01T10:00:00Z' }, ctx);
    expect(context.mode === 'context' && context.params.asOfMs).toBe(Date.parse('2026-03-01T10:00:00.000Z'));
  });

  it('is a 400 naming the field when it is not an ISO-8601 time', () => {
    expect(issue(() => validateFindBody({ query: 'q', as_of: 'last week' }, ctx))[0]).toBe('body.as_of');
    expect(issue(() => validateSearchBody({ query: 'q', mode: 'context', as_of: 42 }, ctx))).toEqual(['body.as_of', 'string_type', expect.any(String)]);
  });
});
