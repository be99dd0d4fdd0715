/**
 * Recent write results for GetWriteStatus, and the counters of GetIndexStats. In memory: a
 * restarted indexer answers "unknown" for older writes (the gateway's `wait` uses done notices).
 */

/** Status of a write as GetWriteStatus reports it. */
export type WriteState = 'pending' | 'applied' | 'failed';

/** A remembered write result. */
export interface WriteRecord {
  state: WriteState;
  /** Version hash when applied. */
  contentHash: string;
  /** Points written or removed. */
  nodes: number;
  /** Failure reason (e.g. ALREADY_EXISTS, INVALID_ARGUMENT, UNAVAILABLE). */
  reason: string;
  /** Failure message. */
  message: string;
}

/** Default number of writes remembered. */
export const DEFAULT_STATUS_CAPACITY = 10_000;

/** A bounded LRU of write results by write id, plus applied/failed counters since start. */
export class WriteStatusBook {
  private readonly entries = new Map<string, WriteRecord>();
  private applied = 0;
  private failed = 0;

  /** @param capacity writes remembered @default 10000 */
  constructor(private readonly capacity = DEFAULT_STATUS_CAPACITY) {}

  /** Mark a write as seen and not yet indexed (no-op for an empty id or a settled write). */
  pending(id: string): void {
    const cur = this.entries.get(id);
    if (id === '' || (cur !== undefined && cur.state !== 'pending')) return;
    this.put(id, { state: 'pending', contentHash: '', nodes: 0, reason: '', message: '' });
  }

  /** Record a final result and count it (counted even without an id). */
  settle(id: string, rec: WriteRecord): void {
    if (rec.state === 'applied') this.applied++;
    else if (rec.state === 'failed') this.failed++;
    if (id !== '') this.put(id, rec);
  }

  /** The result of a write, or undefined when unknown (never seen, or forgotten). */
  get(id: string): WriteRecord | undefined {
    return this.entries.get(id);
  }

  /** Writes applied since start. */
  get writesApplied(): number {
    return this.applied;
  }

  /** Writes that failed since start. */
  get writesFailed(): number {
    return this.failed;
  }

  private put(id: string, rec: WriteRecord): void {
    this.entries.delete(id);
    this.entries.set(id, rec);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
