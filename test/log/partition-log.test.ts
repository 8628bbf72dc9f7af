// A partition's state, owned by PartitionLog: the last stable offset from its
// transaction index, never past the log end the index covers; snapshots read
// back from PostgreSQL applied only when nothing changed the index meanwhile.
import { describe, expect, it } from 'vitest';
import { PartitionLog, type PartitionSnapshot } from '../../src/log/partition-log.js';

const snapshot = (highWatermark: bigint, openTxns: [bigint, bigint][] = []): PartitionSnapshot => ({
  highWatermark,
  logStartOffset: 0n,
  leaderEpoch: 0,
  openTxns: new Map(openTxns),
  hasAbortedTxns: false,
});

function loaded(hw: bigint, openTxns: [bigint, bigint][] = []): PartitionLog {
  const p = new PartitionLog('t', 0);
  expect(p.applySnapshot(snapshot(hw, openTxns), p.txnVersion)).toBe(true);
  return p;
}

describe('partition log', () => {
  it('has its last stable offset at the earliest open transaction, moved by its own appends', () => {
    const p = loaded(10n, [[7n, 4n]]);
    expect(p.lastStableOffset).toBe(4n);
    p.appended(10n, 12n, 0n, { opened: [{ producerId: 8n, offset: 10n }], ended: [{ producerId: 7n, commit: false }] });
    expect(p.lastStableOffset).toBe(10n);
    expect(p.hasAbortedTxns).toBe(true);
    p.appended(12n, 13n, 0n, { opened: [], ended: [{ producerId: 8n, commit: true }] });
    expect(p.lastStableOffset).toBe(13n);
  });

  it("holds the last stable offset at the end of what it has seen when another broker's appends are announced", () => {
    const p = loaded(10n);
    const woken: string[] = [];
    p.onAppend(() => woken.push('hw'));
    expect(p.announced(15n)).toBe(true);
    expect(woken).toEqual(['hw']);
    expect([p.highWatermark, p.lastStableOffset, p.needsReload]).toEqual([15n, 10n, true]);
    // The snapshot read back shows a transaction the other broker opened at 12.
    p.onAppend(() => woken.push('lso'));
    p.applySnapshot(snapshot(15n, [[9n, 12n]]), p.txnVersion);
    expect([p.lastStableOffset, p.needsReload]).toEqual([12n, false]);
    expect(woken).toEqual(['hw', 'lso']);
    expect(p.announced(15n)).toBe(false);
  });

  it('keeps its own index when it changed after the snapshot was asked for, and drops stale producers at the next flush', () => {
    const p = loaded(10n);
    p.setProducer(7n, { producerEpoch: 0, lastAppendMs: 0, lastTimestamp: -1n, coordinatorEpoch: -1, batches: [] });
    const version = p.txnVersion;
    p.appended(10n, 11n, 0n, { opened: [{ producerId: 8n, offset: 10n }], ended: [] });
    expect(p.applySnapshot(snapshot(10n), version)).toBe(false);
    expect(p.lastStableOffset).toBe(10n);
    expect(p.takeStaleProducers()).toBe(false);
    p.announced(12n);
    expect(p.takeStaleProducers()).toBe(true);
    expect(p.producer(7n)).toBeUndefined();
  });
});
