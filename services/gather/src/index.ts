export { createServer, handlers, gatherReady, type GatherDeps, type GatherHandlers } from './server';
export { loadGatherConfig, type GatherConfig } from './config';
export { startGather, type StartOptions as GatherStartOptions } from './start';
export { main } from './main';
// The store factory lives in @ctxmesh/stores (shared with tier-reader and the indexer); re-exported for gather's callers and tests.
export { createEmbedder, openVectorStore, storeSchema, storeProblems, type StoreConfig, type VectorStore } from '@ctxmesh/stores';
export { NodeSearcher, type NodeSearch } from './domain/searcher';
export { EmbeddingCache } from './domain/embed-cache';
export { MicroBatcher } from './domain/batcher';
