// Waiting in tests that stop and start servers: a bounded poll instead of a fixed sleep.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 20 ms until it holds or `ms` pass; returns the elapsed time, or -1 on time-out. */
export async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await check()) return Date.now() - t0;
    await sleep(20);
  }
  return -1;
}
