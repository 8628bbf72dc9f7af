/** Time and timers for the coordinator, injectable so tests can drive rebalances quickly. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
}

export interface Timer {
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};
