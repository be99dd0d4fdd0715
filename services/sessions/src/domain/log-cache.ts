/**
 * Reading a session through the `SessionStore` port: the parsed log and its projection, cached
 * per session and head in this process. The log is append-only, so a cached session only
 * reads the events after the ones it holds; a session deleted and recreated under the same key
 * (another epoch) starts over.
 */
import type { SessionKey, SessionStore } from '@ctxmesh/stores';
import { CorruptLogError, NotFoundError } from './errors';
import type { LogEvent } from './events';
import type { NodeInfo, NodeInfoSource, SessionView } from './projection';
import { buildView, describeNode } from './projection';
import type { SearchIndex } from './search';
import type { RankEstimator } from './tokens';

/** One cached session. */
export interface CacheEntry {
  epoch: string;
  /** Parsed events; append-only, so views at older heads stay valid. */
  events: LogEvent[];
  /** Node facts of these events, memoised by seq. */
  info: NodeInfoSource;
  view?: SessionView;
  /** The search index of SearchContext, built for `head`. */
  search?: { head: number; index: SearchIndex };
}

function cacheKeyOf(key: SessionKey): string {
  return JSON.stringify([key.account, key.user, key.sessionId]);
}

function parseStoredEvent(json: string, seq: number): LogEvent {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new CorruptLogError(seq, 'not JSON', e);
  }
  if (typeof v !== 'object' || v === null || typeof (v as { type?: unknown }).type !== 'string') throw new CorruptLogError(seq, 'not an event');
  return v as LogEvent;
}

/** Loads sessions and keeps the most recently used ones. Safe for concurrent calls. */
export class LogCache {
  private readonly cache = new Map<string, CacheEntry>();

  /**
   * @param store the store read
   * @param estimator the rank estimator of the node facts
   * @param cacheLimit sessions kept (at least 1)
   */
  constructor(
    private readonly store: SessionStore,
    private readonly estimator: RankEstimator,
    private readonly cacheLimit: number,
  ) {}

  /** Build a view of arbitrary events (memoised node facts). */
  viewOf(events: readonly LogEvent[], head = events.length - 1): SessionView {
    return buildView(events, head, this.infoSource());
  }

  /**
   * The cached entry and current view of a session, or null for an unknown session.
   * @throws CorruptLogError when the stored events do not parse or disagree with the stored head or generation
   */
  async load(key: SessionKey): Promise<{ entry: CacheEntry; view: SessionView } | null> {
    const k = cacheKeyOf(key);
    let entry = this.cache.get(k);
    let after = entry ? entry.events.length - 1 : -1;
    let snap = await this.store.snapshot(key, after);
    if (!snap) {
      this.cache.delete(k);
      return null;
    }
    if (entry && (entry.epoch !== snap.meta.epoch || snap.meta.head < after)) {
      // The key now holds another log (deleted and recreated): start over.
      entry = undefined;
      after = -1;
      snap = await this.store.snapshot(key, -1);
      if (!snap) return null;
    }
    if (!entry) entry = { epoch: snap.meta.epoch, events: [], info: this.infoSource() };
    const target = entry;
    snap.events.forEach((json, i) => {
      const seq = after + 1 + i;
      // A concurrent load may already have pushed these seqs; the log is append-only, so
      // whoever pushed first pushed the same bytes.
      if (seq === target.events.length) target.events.push(parseStoredEvent(json, seq));
    });
    if (target.events.length < snap.meta.head + 1) throw new CorruptLogError(snap.meta.head, 'log shorter than head');
    this.remember(k, target);
    const head = snap.meta.head;
    let view = target.view && target.view.head === head ? target.view : undefined;
    if (!view) {
      view = buildView(target.events, head, target.info);
      if (!target.view || target.view.head < head) target.view = view;
    }
    if (view.generation !== snap.meta.generation) {
      throw new CorruptLogError(head, `projected generation ${view.generation} differs from stored ${snap.meta.generation}`);
    }
    return { entry: target, view };
  }

  /**
   * The current view of a session.
   * @throws NotFoundError `SESSION_NOT_FOUND` for an unknown session
   */
  async requireView(key: SessionKey): Promise<SessionView> {
    const r = await this.load(key);
    if (!r) throw new NotFoundError('SESSION_NOT_FOUND', `session ${key.sessionId} not found`, { sessionId: key.sessionId });
    return r.view;
  }

  /**
   * A memo of node facts by seq, checked by event identity. A plain array beats a WeakMap
   * keyed by event here: the 100k-event benchmark spent most of its time in WeakMap lookups
   * and their ephemeron GC work.
   */
  private infoSource(): NodeInfoSource {
    const memo: NodeInfo[] = [];
    return (seq, e) => {
      let i = memo[seq];
      if (i === undefined || i.event !== e) {
        i = describeNode(seq, e, this.estimator);
        memo[seq] = i;
      }
      return i;
    };
  }

  private remember(k: string, entry: CacheEntry): void {
    this.cache.delete(k);
    this.cache.set(k, entry);
    while (this.cache.size > this.cacheLimit) this.cache.delete(this.cache.keys().next().value!);
  }
}
