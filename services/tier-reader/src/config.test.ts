import { ConfigError } from '@ctxmesh/runtime';
import { createEmbedder } from '@ctxmesh/stores';
import { loadTierReaderConfig } from './config';

describe('loadTierReaderConfig', () => {
  it('defaults to the embedded store, the outliner on, and the lexical dimension', () => {
    const cfg = loadTierReaderConfig({});
    expect(cfg).toMatchObject({ TIER_READER_PORT: 50063, TIER_READER_CODE_OUTLINE: true, CTXMESH_VECTOR: 'embedded' });
    expect(createEmbedder(cfg).dimension).toBe(256);
  });

  it('takes the embedding model’s dimension when an endpoint is configured', () => {
    const cfg = loadTierReaderConfig({ CTXMESH_EMBEDDINGS_URL: 'http://emb', CTXMESH_EMBEDDINGS_MODEL: 'bge-m3', CTXMESH_EMBEDDINGS_DIM: '1024' });
    expect(createEmbedder(cfg).dimension).toBe(1024);
  });

  it('reads the same store variables as gather and the indexer (an endpoint needs a model too)', () => {
    expect(() => loadTierReaderConfig({ CTXMESH_EMBEDDINGS_URL: 'http://emb', CTXMESH_EMBEDDINGS_DIM: '1024' })).toThrow(
      'CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set',
    );
  });

  it('lists every problem at once', () => {
    let err: unknown;
    try {
      loadTierReaderConfig({ CTXMESH_VECTOR: 'qdrant', CTXMESH_EMBEDDINGS_URL: 'http://emb', TIER_READER_CODE_OUTLINE: 'maybe' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'TIER_READER_CODE_OUTLINE: must be a boolean (true/false) (got "maybe")',
      'QDRANT_URL: required when CTXMESH_VECTOR=qdrant',
      'CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set',
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
    ]);
  });
});
