export { createServer, handlers, gatherReady, type GatherDeps, type GatherHandlers } from './server';
export { loadGatherConfig, type GatherConfig } from './config';
export { startGather, type StartOptions as GatherStartOptions } from './start';
export { main } from './main';
export { createEmbedder, openVectorStore, storeSchema, storeProblems, type StoreConfig, type VectorStore } from './stores/vector-store';
export { NodeSearcher, rowsFor, type NodeSearch } from './domain/searcher';
export { EmbeddingCache } from './domain/embed-cache';
export { MicroBatcher } from './domain/batcher';
