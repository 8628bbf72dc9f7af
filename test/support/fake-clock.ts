import type { Clock, Timer } from '../../src/clock.js';

/** A clock whose time moves only when the test says so. */
export class FakeClock implements Clock {
  private time = 1_000_000;
  private timers: { at: number; fn: () => void; cancelled: boolean; seq: number }[] = [];
  private seq = 0;

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer = { at: this.time + ms, fn, cancelled: false, seq: this.seq++ };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      this.time = due.at;
      due.fn();
    }
    this.time = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }
}
