export { createServer, handlers, tierReaderReady, type TierReaderDeps, type TierReaderHandlers } from './server';
export { loadTierReaderConfig, type TierReaderConfig } from './config';
export { startTierReader, type StartOptions as TierReaderStartOptions } from './start';
export { main, loadOutliner } from './main';
export { openVectorStore, indexDimension, storeSchema, storeProblems, type StoreConfig, type VectorStore } from './stores/vector-store';
export { readTiers, type BodyReader, type TierCandidate, type TierReadInput, type TierReadResult } from './domain/tiers';
export { readContent, CONTENT_TIERS, type ContentTier, type ContentResult } from './domain/content';
