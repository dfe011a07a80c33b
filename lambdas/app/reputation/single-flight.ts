// One judgment at a time per subject in this process, with one more after it when asked meanwhile: a burst of
// bounces for one tenant (a bought list, thousands a second) reads the window once per run instead of once per
// bounce, and the last bounce's count is always judged (the run after it starts once it was counted).

export class SingleFlight {
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();

  /** Runs `work` for `key` now, or once more after the run in flight (which this call then waits for). */
  run(key: string, work: () => Promise<void>): Promise<void> {
    const current = this.running.get(key);
    if (current) {
      current.again = true;
      return current.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          await work();
        } while (entry.again);
      } finally {
        this.running.delete(key);
      }
    })();
    this.running.set(key, entry);
    return entry.done;
  }
}
