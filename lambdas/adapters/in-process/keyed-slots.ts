// At most `perKey` tasks of one key (an account) at a time, the others waiting their turn in arrival order: the
// local gateway runs each account's requests through it, so one tenant's burst of heavy requests takes a bounded
// share of the one process (and of its embedded DynamoDB's thread) and never stalls another tenant's requests.
export class KeyedSlots {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly perKey: number) {}

  /** Runs `task` once one of the key's slots is free. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const running = this.running.get(key) ?? 0;
    if (running < this.perKey) this.running.set(key, running + 1);
    // Full: wait for a slot handed over by a task that ends (the count stays, so no newcomer slips in between).
    else await new Promise<void>((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
    try {
      return await task();
    } finally {
      this.release(key);
    }
  }

  /** Tasks of the key running now. */
  inFlight(key: string): number {
    return this.running.get(key) ?? 0;
  }

  private release(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(key);
    if (next) {
      next();
      return;
    }
    const left = (this.running.get(key) ?? 1) - 1;
    if (left > 0) this.running.set(key, left);
    else this.running.delete(key);
  }
}
