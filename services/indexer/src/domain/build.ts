/**
 * Where a write's records are built (chunking, abstract, overview, outline) and, when the builder
 * can, embedded: the {@link RecordBuilder} port of the {@link Applier}. In process by default
 * ({@link InProcessBuilder}); the indexer's record threads (`threads/record-pool.ts`) do the same
 * work off the event loop, so HTTP, the bus and the store keep the main thread.
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import { buildRecords, type DocumentInput, type PendingRecord } from './records';

/** One document's records, with their vectors when the builder embedded them. */
export interface BuiltDocument {
  /** The document's points, as {@link buildRecords} makes them. */
  records: PendingRecord[];
  /**
   * One unit vector per record, in order, computed from its `embedText` by an embedder with the
   * {@link Applier}'s embedder id; or null, and the caller embeds them.
   */
  vectors: Float32Array[] | null;
}

/** Per document of a {@link RecordBuilder.build} call: its records, or the error that failed it. */
export type BuildOutcome = PromiseSettledResult<BuiltDocument>;

/** Builds the records of documents (see the module comment). */
export interface RecordBuilder {
  /**
   * Build the records of each input. One document's failure fails only that document.
   * @returns per input, in order, its {@link BuiltDocument} or its error
   */
  build(inputs: readonly DocumentInput[]): Promise<BuildOutcome[]>;
}

/** Options of {@link InProcessBuilder}. */
export interface InProcessBuilderOptions {
  /** Code outliner for code overviews; null → none. */
  outliner: CodeOutliner | null;
  /** Passage size limit, estimated tokens. */
  maxPassageTokens: number;
}

/** {@link RecordBuilder} on the calling thread; it never embeds (vectors: null). */
export class InProcessBuilder implements RecordBuilder {
  constructor(private readonly opts: InProcessBuilderOptions) {}

  async build(inputs: readonly DocumentInput[]): Promise<BuildOutcome[]> {
    return inputs.map((input): BuildOutcome => {
      try {
        return { status: 'fulfilled', value: { records: buildRecords(input, this.opts), vectors: null } };
      } catch (reason) {
        return { status: 'rejected', reason };
      }
    });
  }
}
