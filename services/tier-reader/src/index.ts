export { createServer, handlers, tierReaderReady, type TierReaderDeps, type TierReaderHandlers } from './server';
export { loadTierReaderConfig, type TierReaderConfig } from './config';
export { startTierReader, type StartOptions as TierReaderStartOptions } from './start';
export { main, loadOutliner } from './main';
// The store factory lives in @ctxmesh/stores (shared with gather and the indexer); re-exported for tier-reader's callers and tests.
export { openVectorStore, storeSchema, storeProblems, type StoreConfig, type VectorStore } from '@ctxmesh/stores';
export { readTiers, type BodyReader, type TierCandidate, type TierReadInput, type TierReadResult } from './domain/tiers';
export { readContent, CONTENT_TIERS, type ContentTier, type ContentResult } from './domain/content';
