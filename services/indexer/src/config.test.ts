import { defaultRecordThreads, loadIndexerConfig } from './config';

describe('loadIndexerConfig', () => {
  it('batches ingest in small batches, several at once, with record threads on the cores beside the event loop', () => {
    const cfg = loadIndexerConfig({});
    expect([cfg.INDEXER_BATCH_SIZE, cfg.INDEXER_CONCURRENCY]).toEqual([8, 4]);
    expect(cfg.INDEXER_RECORD_THREADS).toBe(defaultRecordThreads());
    expect(loadIndexerConfig({ INDEXER_RECORD_THREADS: '0' }).INDEXER_RECORD_THREADS).toBe(0);
    expect(() => loadIndexerConfig({ INDEXER_RECORD_THREADS: '-1' })).toThrow(/INDEXER_RECORD_THREADS/);
  });

  it('defaults to one record thread less than the cores, at least 1 and at most 4', () => {
    expect([1, 2, 3, 4, 8, 64].map((n) => defaultRecordThreads(n))).toEqual([1, 1, 2, 3, 4, 4]);
  });
});
