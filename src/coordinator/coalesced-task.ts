// A task run one run at a time, where calls made during a run ask for one
// more run after it, however many they are: the shape of every lease
// rebalance here (coordinator slots, partition leadership), where a call
// means "what I know changed" and the next run reads it all again anyway.

export class CoalescedTask {
  private running: Promise<void> | null = null;
  private rerun = false;

  /** `stopped`: once true, no further run starts (the one under way finishes). */
  constructor(
    private readonly task: () => Promise<void>,
    private readonly stopped: () => boolean = () => false,
  ) {}

  /**
   * Runs the task now, or, during a run, once more after it. The promise
   * settles when the runs end: every caller waits for a run that started
   * after its call. A run that throws ends the runs and rejects every caller
   * waiting on them; the next call starts afresh.
   */
  run(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    const runs = async () => {
      try {
        do {
          this.rerun = false;
          await this.task();
        } while (this.rerun && !this.stopped());
      } finally {
        this.running = null;
      }
    };
    this.running = runs();
    return this.running;
  }

  /** Settles once no run is under way (after the runs end, whether they failed or not). */
  async settled(): Promise<void> {
    await this.running?.catch(() => {});
  }
}
