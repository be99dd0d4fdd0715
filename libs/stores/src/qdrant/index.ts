/**
 * Qdrant adapter of the VectorIndex port. The request builders stay module-internal (imported
 * by path in tests); the public surface is the adapter and its collection schema.
 */
export { QdrantVectorIndex, DEFAULT_QDRANT_COLLECTION, type QdrantVectorIndexOptions } from './qdrant-vector-index';
export { createCollectionBody, payloadIndexBodies, DENSE_VECTOR, LEXICAL_VECTOR, type CollectionOptions } from './schema';
export { pointId, uuidV5, POINT_ID_NAMESPACE } from './ids';
