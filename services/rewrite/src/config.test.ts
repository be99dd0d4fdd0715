import { ConfigError } from '@ctxmesh/runtime';
import { chatCompletionsUrl, loadRewriteConfig, rerankUrl } from './config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadRewriteConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadRewriteConfig', () => {
  it('gives no model, no reranker and the contract fuses on an empty environment', () => {
    const { env, settings } = loadRewriteConfig({});
    expect(env.REWRITE_PORT).toBe(50066);
    expect(settings).toEqual({
      llm: null,
      rerank: null,
      enableIntent: true,
      expansionTimeoutMs: 5000,
      rewriteTimeoutMs: 30_000,
      queryRewriteTimeoutMs: 6000,
      rerankTimeoutMs: 8000,
    });
  });

  it('resolves the chat and rerank endpoints and keeps keys and models', () => {
    const { settings } = loadRewriteConfig({
      CTXMESH_LLM_URL: 'https://api.example.com/v1/',
      CTXMESH_LLM_API_KEY: 'sk-abc',
      CTXMESH_LLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct',
      CTXMESH_RERANK_URL: 'https://api.jina.ai/v1',
      CTXMESH_RERANK_MODEL: 'jina-reranker-v2-base-multilingual',
      CTXMESH_ENABLE_INTENT: 'false',
      CTXMESH_REWRITE_TIMEOUT_MS: '12000',
    });
    expect(settings.llm).toEqual({ url: 'https://api.example.com/v1/chat/completions', apiKey: 'sk-abc', model: 'Qwen/Qwen2.5-7B-Instruct' });
    expect(settings.rerank).toEqual({ url: 'https://api.jina.ai/v1/rerank', apiKey: '', model: 'jina-reranker-v2-base-multilingual', style: 'documents' });
    expect(settings.enableIntent).toBe(false);
    expect(settings.rewriteTimeoutMs).toBe(12_000);
  });

  it('accepts a TEI reranker without a model name', () => {
    const { settings } = loadRewriteConfig({ CTXMESH_RERANK_URL: 'http://tei:8080', CTXMESH_RERANK_STYLE: 'tei' });
    expect(settings.rerank).toEqual({ url: 'http://tei:8080/rerank', apiKey: '', model: '', style: 'tei' });
  });

  it('lists every problem at once: URLs, keys, model names, fuses and missing partners', () => {
    const problems = problemsOf({
      CTXMESH_LLM_URL: 'ftp://models.local',
      CTXMESH_LLM_API_KEY: 'sk with space',
      CTXMESH_RERANK_MODEL: 'bad model',
      CTXMESH_EXPANSION_TIMEOUT_MS: '0',
      CTXMESH_REWRITE_TIMEOUT_MS: '1.5',
      SEARCH_RERANKING_TIMEOUT_MS: '-3',
      CTXMESH_RERANK_STYLE: 'cohere-v9',
    });
    const keys = problems.map((p) => p.split(':')[0]).sort();
    expect(keys).toEqual(
      [
        'CTXMESH_EXPANSION_TIMEOUT_MS',
        'CTXMESH_LLM_API_KEY',
        'CTXMESH_LLM_MODEL',
        'CTXMESH_LLM_URL',
        'CTXMESH_REWRITE_TIMEOUT_MS',
        'CTXMESH_RERANK_MODEL',
        'CTXMESH_RERANK_MODEL',
        'CTXMESH_RERANK_STYLE',
        'SEARCH_RERANKING_TIMEOUT_MS',
      ].sort(),
    );
    expect(problems).toContain('CTXMESH_LLM_MODEL: required when CTXMESH_LLM_URL is set');
    expect(problems).toContain('CTXMESH_RERANK_MODEL: set but CTXMESH_RERANK_URL is not (no reranker would be used)');
  });

  it('rejects a model or key without its URL even when everything else parses', () => {
    expect(problemsOf({ CTXMESH_LLM_MODEL: 'gpt-4o-mini' })).toEqual(['CTXMESH_LLM_MODEL: set but CTXMESH_LLM_URL is not (no model would be used)']);
    expect(problemsOf({ CTXMESH_RERANK_URL: 'http://r' })).toEqual([
      'CTXMESH_RERANK_MODEL: required when CTXMESH_RERANK_URL is set (unless CTXMESH_RERANK_STYLE=tei)',
    ]);
  });

  it('treats blank values as unset', () => {
    expect(loadRewriteConfig({ CTXMESH_LLM_URL: '  ', CTXMESH_LLM_MODEL: '' }).settings.llm).toBeNull();
  });
});

describe('endpoint resolution', () => {
  it.each([
    ['http://h:8000', 'http://h:8000/v1/chat/completions'],
    ['http://h:8000/v1', 'http://h:8000/v1/chat/completions'],
    ['http://h/openai/v1/chat/completions/', 'http://h/openai/v1/chat/completions'],
  ])('chatCompletionsUrl(%s) = %s', (input, want) => {
    expect(chatCompletionsUrl(input)).toBe(want);
  });

  it.each([
    ['http://tei:8080', 'http://tei:8080/rerank'],
    ['https://api.cohere.com/v2/rerank', 'https://api.cohere.com/v2/rerank'],
    ['https://api.jina.ai/v1/', 'https://api.jina.ai/v1/rerank'],
  ])('rerankUrl(%s) = %s', (input, want) => {
    expect(rerankUrl(input)).toBe(want);
  });
});
