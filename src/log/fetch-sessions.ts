// Incremental fetch sessions (KIP-227), as Kafka's FetchSession.scala keeps
// them: per broker process, in memory, not tied to a connection (a client may
// carry its session id over a new connection). A full fetch (epoch 0) may
// create a session that caches its partitions and the request parameters of
// each; an incremental fetch (epoch ≥ 1) names only the partitions it adds or
// changes and those it forgets, and its response leaves out the partitions
// that have nothing to say (no records, same high watermark and log start
// offset, no error, no preferred read replica). A full fetch naming a session
// closes it; epoch -1 (FINAL) asks for no session. The cache holds
// max.incremental.fetch.session.cache.slots sessions; a new one may evict a
// session unused for 2 minutes (Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS)
// or, failing that, the least valuable evictable one (unprivileged before
// privileged, then fewest partitions) if that is worth less than the new one.
// Kafka shards its cache by session id for lock contention; one Node.js
// thread needs no shards, so the cache is one pool of that many slots.
import { randomInt } from 'node:crypto';
import type { Clock } from '../clock.js';
import { ErrorCode } from '../protocol/errors.js';

export const INVALID_SESSION_ID = 0;
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
/** How long a session must be unused (or, to be evicted for a bigger one, have existed) before another may take its slot. */
export const MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000;

/** The epoch after `epoch`: FINAL stays FINAL, the largest int wraps to 1 (Kafka's FetchMetadata.nextEpoch). */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  return epoch === 0x7fffffff ? 1 : epoch + 1;
}

/** What a fetch asks of one partition (the request's partition entry). */
export interface PartitionRequest {
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
  lastFetchedEpoch: number;
}

/** A partition to read: its topic as the request named it (by name below v13, by id from v13) and what is asked of it. */
export interface FetchPartition {
  topic: string;
  topicId: string;
  request: PartitionRequest;
}

/** A forgotten partition of an incremental fetch. */
export interface ForgottenPartition {
  topic: string;
  topicId: string;
  partition: number;
}

/** What the read found for a partition: what decides whether an incremental response must carry it. */
export interface PartitionResult {
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  recordsBytes: number;
  preferredReadReplica: number;
}

export interface FetchSessionRequest {
  apiVersion: number;
  sessionId: number;
  sessionEpoch: number;
  /** Fetches from a replica (followers' sessions are privileged in eviction). */
  privileged: boolean;
  partitions: FetchPartition[];
  forgotten: ForgottenPartition[];
}

export interface FetchResponseShape {
  errorCode: number;
  sessionId: number;
  /** Per partition of the context, whether the response carries it. */
  send: boolean[];
}

/** One fetch's view of the session cache: the partitions to read, then the response's session id and which partitions it carries. */
export interface FetchContext {
  readonly kind: 'error' | 'sessionless' | 'full' | 'incremental';
  readonly partitions: readonly FetchPartition[];
  /** Called once, with one result per partition, after reading. */
  complete(results: readonly PartitionResult[]): FetchResponseShape;
}

interface CachedPartition {
  topic: string;
  topicId: string;
  request: PartitionRequest;
  /** The high watermark last sent (-1 after an error, so the partition is sent again when the error clears). */
  highWatermark: bigint;
  /** The log start offset last sent. */
  localLogStartOffset: bigint;
}

class FetchSession {
  /** Partitions in the order they are read; one that returned records moves to the end, so every partition gets its turn under the byte limits. */
  readonly partitions = new Map<string, CachedPartition>();
  epoch = nextEpoch(INITIAL_EPOCH);
  lastUsedMs: number;
  /** Partitions when last touched; -1 while not in the cache. */
  cachedSize = -1;
  evictableByAll = false;
  evictableByPrivileged = false;

  constructor(
    readonly id: number,
    readonly privileged: boolean,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
  ) {
    this.lastUsedMs = creationMs;
  }

  key(topic: string, topicId: string, partition: number): string {
    return `${partition}:${this.usesTopicIds ? topicId : topic}`;
  }

  /** Adds or updates the request's partitions and drops the forgotten ones. */
  update(partitions: readonly FetchPartition[], forgotten: readonly ForgottenPartition[]): void {
    for (const p of partitions) {
      const key = this.key(p.topic, p.topicId, p.request.partition);
      const cached = this.partitions.get(key);
      if (cached) cached.request = p.request;
      else this.partitions.set(key, { topic: p.topic, topicId: p.topicId, request: p.request, highWatermark: -1n, localLogStartOffset: -1n });
    }
    for (const f of forgotten) this.partitions.delete(this.key(f.topic, f.topicId, f.partition));
  }
}

/** Kafka's EvictableKey order: unprivileged before privileged, then fewer partitions, then lower id. */
function compareEvictable(a: { privileged: boolean; size: number; id: number }, b: { privileged: boolean; size: number; id: number }): number {
  return Number(a.privileged) - Number(b.privileged) || a.size - b.size || a.id - b.id;
}

/** Whether an incremental response must carry the partition (Kafka's maybeUpdateResponseData); updates what the session last sent. */
function mustRespond(cached: CachedPartition, result: PartitionResult): boolean {
  let respond = result.recordsBytes > 0 || result.preferredReadReplica >= 0;
  if (cached.highWatermark !== result.highWatermark) {
    respond = true;
    cached.highWatermark = result.highWatermark;
  }
  if (cached.localLogStartOffset !== result.logStartOffset) {
    respond = true;
    cached.localLogStartOffset = result.logStartOffset;
  }
  if (result.errorCode !== ErrorCode.NONE) {
    cached.highWatermark = -1n;
    respond = true;
  }
  return respond;
}

const all = (results: readonly PartitionResult[]) => results.map(() => true);

/** The broker's incremental fetch sessions; its one owner of them. */
export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  private readonly maxEntries: number;
  private readonly evictionMs: number;
  private readonly clock: Clock;
  private partitionsCached = 0;
  /** Sessions evicted to make room for others (Kafka's IncrementalFetchSessionEvictionsPerSec, as a count). */
  evictions = 0;
  /** Incremental fetches served within a session (so a client's use of sessions can be seen). */
  incrementalFetches = 0;

  constructor(options: { maxEntries: number; clock: Clock; evictionMs?: number }) {
    this.maxEntries = options.maxEntries;
    this.clock = options.clock;
    this.evictionMs = options.evictionMs ?? MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS;
  }

  /** Sessions in the cache (Kafka's NumIncrementalFetchSessions). */
  get size(): number {
    return this.sessions.size;
  }

  /** Partitions cached over all sessions (Kafka's NumIncrementalFetchPartitionsCached). */
  get totalPartitions(): number {
    return this.partitionsCached;
  }

  /** The context of one fetch (Kafka's FetchManager.newContext). */
  newContext(req: FetchSessionRequest): FetchContext {
    const full = req.apiVersion < 7 || req.sessionEpoch === INITIAL_EPOCH || req.sessionEpoch === FINAL_EPOCH;
    if (full) {
      // Any session a full fetch names is closed.
      if (req.apiVersion >= 7 && req.sessionId !== INVALID_SESSION_ID) this.remove(req.sessionId);
      if (req.apiVersion < 7 || req.sessionEpoch === FINAL_EPOCH) return this.sessionless(req.partitions);
      return this.fullContext(req);
    }
    const session = this.sessions.get(req.sessionId);
    if (!session) return this.errorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    if (session.epoch !== req.sessionEpoch) return this.errorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    if (session.usesTopicIds !== req.apiVersion >= 13) return this.errorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
    session.update(req.partitions, req.forgotten);
    if (session.partitions.size === 0) {
      this.remove(session.id);
      return this.sessionless(req.partitions);
    }
    this.touch(session, this.clock.now());
    session.epoch = nextEpoch(session.epoch);
    return this.incrementalContext(session, req.sessionEpoch);
  }

  private errorContext(errorCode: number): FetchContext {
    return { kind: 'error', partitions: [], complete: () => ({ errorCode, sessionId: INVALID_SESSION_ID, send: [] }) };
  }

  private sessionless(partitions: FetchPartition[]): FetchContext {
    return { kind: 'sessionless', partitions, complete: (results) => ({ errorCode: ErrorCode.NONE, sessionId: INVALID_SESSION_ID, send: all(results) }) };
  }

  private fullContext(req: FetchSessionRequest): FetchContext {
    const { partitions } = req;
    return {
      kind: 'full',
      partitions,
      complete: (results) => {
        const sessionId = this.maybeCreateSession(req.privileged, results.length, req.apiVersion >= 13, (session) => {
          for (const [i, p] of partitions.entries()) {
            const r = results[i]!;
            const key = session.key(p.topic, p.topicId, p.request.partition);
            session.partitions.set(key, { topic: p.topic, topicId: p.topicId, request: p.request, highWatermark: r.highWatermark, localLogStartOffset: r.logStartOffset });
          }
        });
        return { errorCode: ErrorCode.NONE, sessionId, send: all(results) };
      },
    };
  }

  private incrementalContext(session: FetchSession, requestEpoch: number): FetchContext {
    this.incrementalFetches++;
    const partitions = [...session.partitions.values()].map((c) => ({ topic: c.topic, topicId: c.topicId, request: c.request }));
    return {
      kind: 'incremental',
      partitions,
      complete: (results) => {
        // Another fetch of the same session ran in between (a duplicate request): its epoch has moved on.
        if (session.epoch !== nextEpoch(requestEpoch)) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: session.id, send: [] };
        const send = partitions.map((p, i) => {
          const key = session.key(p.topic, p.topicId, p.request.partition);
          const cached = session.partitions.get(key);
          if (!cached) return true;
          const result = results[i]!;
          const respond = mustRespond(cached, result);
          if (respond && result.recordsBytes > 0) {
            session.partitions.delete(key);
            session.partitions.set(key, cached);
          }
          return respond;
        });
        return { errorCode: ErrorCode.NONE, sessionId: session.id, send };
      },
    };
  }

  /** A new session when there is a free slot or one can be evicted; INVALID_SESSION_ID otherwise. */
  private maybeCreateSession(privileged: boolean, size: number, usesTopicIds: boolean, fill: (session: FetchSession) => void): number {
    const now = this.clock.now();
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, size, now)) return INVALID_SESSION_ID;
    const session = new FetchSession(this.newSessionId(), privileged, usesTopicIds, now);
    fill(session);
    this.sessions.set(session.id, session);
    this.touch(session, now);
    return session.id;
  }

  private newSessionId(): number {
    let id;
    do id = randomInt(1, 0x7fffffff);
    while (this.sessions.has(id));
    return id;
  }

  /**
   * Kafka's tryEvict: a new session may take the slot of one unused for longer than the eviction time (the least recently
   * used), else of the least valuable evictable session if that one is worth no more than the new one.
   */
  private tryEvict(privileged: boolean, size: number, now: number): boolean {
    let lru: FetchSession | null = null;
    for (const s of this.sessions.values()) if (!lru || s.lastUsedMs < lru.lastUsedMs || (s.lastUsedMs === lru.lastUsedMs && s.id < lru.id)) lru = s;
    if (!lru) return false;
    if (now - lru.lastUsedMs > this.evictionMs) return this.evict(lru);
    let least: FetchSession | null = null;
    for (const s of this.sessions.values()) {
      if (!(privileged ? s.evictableByPrivileged : s.evictableByAll)) continue;
      if (!least || compareEvictable(evictableKey(s), evictableKey(least)) < 0) least = s;
    }
    if (!least || compareEvictable({ privileged, size, id: 0 }, evictableKey(least)) < 0) return false;
    return this.evict(least);
  }

  private evict(session: FetchSession): true {
    this.remove(session.id);
    this.evictions++;
    return true;
  }

  private remove(sessionId: number): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.partitionsCached -= session.cachedSize;
    session.cachedSize = -1;
  }

  /** Marks the session used now and records its size; whether others may evict it is decided here, as in Kafka's touch. */
  private touch(session: FetchSession, now: number): void {
    session.lastUsedMs = now;
    if (session.cachedSize !== -1) this.partitionsCached -= session.cachedSize;
    session.cachedSize = session.partitions.size;
    this.partitionsCached += session.cachedSize;
    const old = now - session.creationMs > this.evictionMs;
    session.evictableByPrivileged = !session.privileged || old;
    session.evictableByAll = old;
  }
}

function evictableKey(s: FetchSession): { privileged: boolean; size: number; id: number } {
  return { privileged: s.privileged, size: s.cachedSize, id: s.id };
}
