/**
 * @ctxmesh/embedder: the `Embedder` port, the built-in `LexicalEmbedder` (hashed word and
 * character n-grams, CJK-aware, no model download), the OpenAI-compatible `HttpEmbedder`, and
 * the shared tokenizer that every lexical signal (the embedded inverted index, Qdrant sparse vectors) uses.
 */
export * from './embedder';
export * from './lexical';
export * from './http';
export * from './tokenize';
