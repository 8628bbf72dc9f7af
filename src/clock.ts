/** Time and timers for the whole broker, injectable so tests can drive timeouts (rebalances, transaction and producer-id expiry) on a fake clock. */
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
