/**
 * The ranking both VectorIndex engines share (see `rank.ts`): engines generate candidates and
 * supply features; this module orders, fuses, scores and thresholds.
 */
export { BM25_B, BM25_K1, IDF_FLOOR, MAX_LEN, MAX_TF, bm25Idf, bm25Tf, robertsonIdf } from './bm25';
export { type RrfOptions, reciprocalRankFusion } from './fusion';
export { type CorpusStats, type DfKey, type QueryTerm, QueryScorer, QueryTerms, type TermClass, type WeightedTerm, dfKey } from './query';
export { type CalibrateInput, type Candidate, type DenseCandidate, type FuseInput, type LexicalCandidate, type RankedHit, type TermsOf, bm25Key, calibrate, documentPool, fuse, legDepth, orderDense, orderLexical, rank, takeDocuments } from './rank';
export { NOISE_FLOOR_SCORE, RELEVANCE_INPUTS, TFIDF_EPSILON, type RelevanceFeatures, type RelevanceModel, relevanceInputs, relevanceScore, sigmoid } from './relevance';
export { DocTerms, TfIdfScorer, type TermCounts, bagOfCounts, canBeMinor, decodeTermCounts, encodeTermCounts, termBag, termCounts } from './terms';
