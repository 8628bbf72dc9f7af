// Appends announced between brokers that share the database. Out: after
// each commit, `instance:topicId:partition:highWatermark:logStartOffset` on
// the append channel (only while another broker is registered). In: another
// broker's announcement moves the partition's high watermark at once (parked
// fetches wake); if it holds appends this process had not seen, the
// partition's producers' state is dropped and its transaction index read back
// before the last stable offset passes them (see PartitionLog).
import type { PartitionLog } from './partition-log.js';
import type { Partitions } from './partitions.js';

/** Sends announcements (AppendAnnouncer). */
export interface Announcer {
  announce(partitionKey: string, payload: string): void;
}

export class Announcements {
  private readonly announcer: Announcer;
  private readonly partitions: Partitions;
  private readonly instanceId: string;
  private readonly readBackLater: (p: PartitionLog) => void;
  /** Other broker processes share the database (setOthersListening). */
  private othersListening = false;

  constructor(options: { announcer: Announcer; partitions: Partitions; instanceId: string; readBackLater: (p: PartitionLog) => void }) {
    this.announcer = options.announcer;
    this.partitions = options.partitions;
    this.instanceId = options.instanceId;
    this.readBackLater = options.readBackLater;
  }

  /** The prefix of this broker's payloads for the partition (the log start mover's NOTIFY uses it too). */
  payloadPrefix(p: PartitionLog): string {
    return `${this.instanceId}:${p.topicId}:${p.partition}`;
  }

  /**
   * Whether other broker processes share the database, and so must hear of
   * this one's appends (a lone broker skips the extra statement per flush).
   * When one appears, every partition loaded here is announced as it stands,
   * in case it read a partition before this broker knew of it.
   */
  setOthersListening(present: boolean): void {
    if (present && !this.othersListening) for (const p of this.partitions.all()) this.send(p);
    this.othersListening = present;
  }

  /** Whether other broker processes share the database: they may append to a partition this one leads (transaction markers, the outbox relay). */
  get othersPresent(): boolean {
    return this.othersListening;
  }

  /** After a commit: tells the other brokers, if any. */
  committed(p: PartitionLog): void {
    if (this.othersListening) this.send(p);
  }

  private send(p: PartitionLog): void {
    this.announcer.announce(`${p.topicId}:${p.partition}`, `${this.payloadPrefix(p)}:${p.highWatermark}:${p.logStartOffset}`);
  }

  /** Another broker process moved a partition's log: `instance:topicId:partition:highWatermark:logStartOffset`. */
  received(payload: string): void {
    const [instance, topicId, partition, hw, logStart] = payload.split(':');
    if (instance === this.instanceId || !topicId || partition === undefined || hw === undefined) return;
    const p = this.partitions.loaded(topicId, Number(partition));
    if (p?.announced(BigInt(hw), logStart === undefined ? undefined : BigInt(logStart))) this.readBackLater(p);
  }
}
