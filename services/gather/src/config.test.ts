import { ConfigError } from '@ctxmesh/runtime';
import { loadGatherConfig } from './config';

describe('loadGatherConfig', () => {
  it('defaults to the embedded store and the lexical embedder', () => {
    expect(loadGatherConfig({})).toMatchObject({
      GATHER_PORT: 50062,
      CTXMESH_VECTOR: 'embedded',
      CTXMESH_DATA_DIR: './.ctxmesh',
      CTXMESH_LEXICAL_DIM: 256,
      GATHER_EMBED_CACHE_SIZE: 512,
    });
  });

  it('lists every problem at once, including the rules across variables', () => {
    let err: unknown;
    try {
      loadGatherConfig({ CTXMESH_VECTOR: 'qdrant', CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_LEXICAL_DIM: '300' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'QDRANT_URL: required when CTXMESH_VECTOR=qdrant',
      'CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set',
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
      'CTXMESH_LEXICAL_DIM: must be a power of two (got 300)',
    ]);
  });

  it('reports schema problems and cross-variable rules together', () => {
    let err: unknown;
    try {
      loadGatherConfig({ GATHER_PORT: 'eighty', CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_EMBEDDINGS_MODEL: 'm', CTXMESH_LEXICAL_DIM: 'x' });
    } catch (e) {
      err = e;
    }
    expect((err as ConfigError).problems).toEqual([
      'GATHER_PORT: must be an integer (got "eighty")',
      'CTXMESH_LEXICAL_DIM: must be an integer (got "x")',
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
    ]);
  });

  it('refuses an unknown store kind', () => {
    expect(() => loadGatherConfig({ CTXMESH_VECTOR: 'postgres' })).toThrow(/CTXMESH_VECTOR/);
  });
});
