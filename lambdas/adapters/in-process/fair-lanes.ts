// At most `maxInFlight` tasks at once, handed out round-robin across lanes (an account each): a lane with many
// tasks waiting gets one turn per round like any other, so one tenant's burst of store calls never queues ahead of
// another tenant's next call. The local runtime puts its embedded DynamoDB's calls through it, keyed by the
// account whose request made them (the embedded store is one thread that serves every tenant).
export class FairLanes {
  private inFlight = 0;
  /** Lanes with tasks waiting, in the order their turns come; each lane's tasks in arrival order. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly maxInFlight: number) {}

  async run<T>(lane: string, task: () => Promise<T>): Promise<T> {
    if (this.inFlight < this.maxInFlight && this.waiting.size === 0) this.inFlight++;
    else {
      // The slot is handed over by a task that ends (the count stays), in round-robin order.
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(lane);
        if (queue) queue.push(resolve);
        else this.waiting.set(lane, [resolve]);
      });
    }
    try {
      return await task();
    } finally {
      this.next();
    }
  }

  /** Tasks running now, and waiting (tests). */
  get counts(): { readonly inFlight: number; readonly waiting: number } {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    return { inFlight: this.inFlight, waiting };
  }

  private next(): void {
    const first = this.waiting.entries().next();
    if (first.done) {
      this.inFlight--;
      return;
    }
    const [lane, queue] = first.value;
    const resolve = queue.shift() as () => void;
    // The lane goes to the back of the round (or leaves it, when it has nothing more waiting).
    this.waiting.delete(lane);
    if (queue.length) this.waiting.set(lane, queue);
    resolve();
  }
}
