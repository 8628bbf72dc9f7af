// The one thing the transaction coordinator asks of the log: a COMMIT or
// ABORT marker appended to a partition through the normal append path (so
// it takes the next offset in order). An interface, so that the coordinator
// runs in unit tests without a log; logMarkerWriter is the broker's.
import { ErrorCode } from '../protocol/errors.js';
import { buildEndTxnMarker, readBatchHeaderAt } from '../protocol/records/index.js';
import { AppendError, type LogManager } from '../log/log-manager.js';

export interface TxnMarker {
  commit: boolean;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** The marker's timestamp (ms). */
  timestamp: number;
}

export interface TxnMarkerWriter {
  /** Appends the marker; resolves without one when the partition no longer exists (its topic was deleted). */
  writeMarker(topicId: string, partition: number, marker: TxnMarker): Promise<void>;
}

/** Markers written through the broker's LogManager. */
export function logMarkerWriter(logs: LogManager): TxnMarkerWriter {
  return {
    async writeMarker(topicId, partition, m) {
      const log = await logs.partition(topicId, partition);
      if (!log) return; // the topic was deleted
      const data = buildEndTxnMarker({ commit: m.commit, producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, timestamp: BigInt(m.timestamp) });
      const header = readBatchHeaderAt(data, 0)!;
      await logs.append(log, [{ data, header, marker: { commit: m.commit, coordinatorEpoch: m.coordinatorEpoch } }]).catch((err: unknown) => {
        // Deleted while the marker waited: nothing is left there to commit or abort.
        if (!(err instanceof AppendError && err.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) throw err;
      });
    },
  };
}
