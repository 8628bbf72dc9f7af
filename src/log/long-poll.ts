// Long-poll waits of Fetch: parked until one of the partitions grows (or its
// last stable offset moves), or the wait times out on the broker's clock.
import type { Clock } from '../clock.js';
import type { PartitionLog } from './partition-log.js';

/** Resolves when any of the partitions grows, or after timeoutMs; the returned cancel releases the wait early. */
export function waitForAppend(clock: Clock, partitions: readonly PartitionLog[], timeoutMs: number): { done: Promise<void>; cancel: () => void } {
  let cancel = () => {};
  const done = new Promise<void>((resolve) => {
    const offs: (() => void)[] = [];
    const finish = () => {
      timer.cancel();
      for (const off of offs) off();
      resolve();
    };
    const timer = clock.setTimeout(finish, timeoutMs);
    for (const p of partitions) offs.push(p.onAppend(finish));
    cancel = finish;
  });
  return { done, cancel };
}
