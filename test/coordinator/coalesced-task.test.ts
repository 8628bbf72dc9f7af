// CoalescedTask: one run at a time, calls during a run coalesced into one more run.
import { describe, expect, it } from 'vitest';
import { CoalescedTask } from '../../src/coordinator/coalesced-task.js';

/** A task whose runs are counted, and each held until the test lets it finish. */
function heldTask(failOn?: number) {
  let runs = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  const waiting: (() => void)[] = [];
  const task = async () => {
    const run = ++runs;
    maxConcurrent = Math.max(maxConcurrent, ++concurrent);
    await new Promise<void>((resolve) => waiting.push(resolve));
    concurrent--;
    if (run === failOn) throw new Error(`run ${run} failed`);
  };
  return {
    task,
    runs: () => runs,
    maxConcurrent: () => maxConcurrent,
    /** Lets the run under way finish, then lets the promises settle. */
    finish: async () => {
      waiting.shift()!();
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

const settledState = (p: Promise<void>) => {
  const state = { settled: false, failed: false };
  p.then(
    () => void (state.settled = true),
    () => void (state.settled = state.failed = true),
  );
  return state;
};

describe('CoalescedTask', () => {
  it('runs the task at once when idle; the call settles when the run ends', async () => {
    const t = heldTask();
    const runs = new CoalescedTask(t.task);
    const call = settledState(runs.run());
    expect(t.runs()).toBe(1);
    expect(call.settled).toBe(false);
    await t.finish();
    expect(call).toEqual({ settled: true, failed: false });
  });

  it('calls during a run make one more run after it, never two at once; every caller waits for that run', async () => {
    const t = heldTask();
    const runs = new CoalescedTask(t.task);
    const first = settledState(runs.run());
    const during = [settledState(runs.run()), settledState(runs.run()), settledState(runs.run())];
    expect(t.runs()).toBe(1);
    await t.finish();
    expect(t.runs()).toBe(2);
    expect([first, ...during].some((c) => c.settled)).toBe(false);
    await t.finish();
    expect([first, ...during].every((c) => c.settled && !c.failed)).toBe(true);
    expect(t.runs()).toBe(2);
    expect(t.maxConcurrent()).toBe(1);
  });

  it('a call during the extra run asks for yet another; a call after the runs end starts afresh', async () => {
    const t = heldTask();
    const runs = new CoalescedTask(t.task);
    void runs.run();
    void runs.run();
    await t.finish();
    void runs.run(); // during the second run
    await t.finish();
    expect(t.runs()).toBe(3);
    await t.finish();
    const later = settledState(runs.run());
    expect(t.runs()).toBe(4);
    await t.finish();
    expect(later.settled).toBe(true);
  });

  it('starts no further run once stopped; the run under way finishes', async () => {
    const t = heldTask();
    let stopped = false;
    const runs = new CoalescedTask(t.task, () => stopped);
    const first = settledState(runs.run());
    void runs.run();
    stopped = true;
    await t.finish();
    expect(first.settled).toBe(true);
    expect(t.runs()).toBe(1);
  });

  it('a run that throws rejects every caller waiting on it and ends the runs; settled() does not reject, and the next call runs again', async () => {
    const t = heldTask(1);
    const runs = new CoalescedTask(t.task);
    const first = settledState(runs.run());
    const during = settledState(runs.run());
    const idle = runs.settled();
    await t.finish();
    expect([first, during]).toEqual([
      { settled: true, failed: true },
      { settled: true, failed: true },
    ]);
    await idle;
    expect(t.runs()).toBe(1);
    const next = settledState(runs.run());
    expect(t.runs()).toBe(2);
    await t.finish();
    expect(next).toEqual({ settled: true, failed: false });
  });
});
