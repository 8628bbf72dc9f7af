import type { TxnMarker, TxnMarkerWriter } from '../../src/coordinator/txn-markers.js';

/** A marker writer that records what the transaction coordinator writes, and can be told to fail (the log's storage down). */
export class RecordingMarkers implements TxnMarkerWriter {
  readonly written: ({ topicId: string; partition: number } & TxnMarker)[] = [];
  /** While set, every write fails with this error. */
  failWith: Error | null = null;

  async writeMarker(topicId: string, partition: number, marker: TxnMarker): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.written.push({ topicId, partition, ...marker });
  }
}
