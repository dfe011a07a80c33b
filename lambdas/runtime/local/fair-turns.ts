// Turns at a shared resource, fair across keys (tenants): at most `limit` tasks run at once; while all turns
// are taken, tasks wait by key, first in first out within a key, and a freed turn goes to the waiting key that
// was served least recently. So a key with one task waits for one freed turn, not behind another key's hundreds.
import { AsyncLocalStorage } from 'node:async_hooks';

export class FairTurns {
  /** Waiting tasks by key; only keys with at least one. */
  private readonly waitingByKey = new Map<string, (() => void)[]>();
  /** When each key with tasks running or waiting was last given a turn (a sequence number). */
  private readonly lastTurn = new Map<string, number>();
  private readonly runningByKey = new Map<string, number>();
  /** A task that asks for another turn while it runs gets it at once: waiting would deadlock at limit 1. */
  private readonly holding = new AsyncLocalStorage<FairTurns>();
  private turns = 0;
  private running = 0;
  private queued = 0;

  constructor(private readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`FairTurns needs a limit of at least 1, not ${limit}`);
  }

  /** Runs `task` in one of the turns, once it is `key`'s turn. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (this.holding.getStore() === this) return task();
    if (this.running < this.limit) this.start(key);
    // All taken: wait for a turn handed over by a task that ends (the count stays, so no newcomer slips in).
    else await new Promise<void>((resolve) => this.enqueue(key, resolve));
    try {
      return await this.holding.run(this, task);
    } finally {
      this.release(key);
    }
  }

  /** Tasks running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Tasks waiting for a turn. */
  get waiting(): number {
    return this.queued;
  }

  private start(key: string): void {
    this.running += 1;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    this.lastTurn.set(key, ++this.turns);
  }

  private enqueue(key: string, resume: () => void): void {
    const queue = this.waitingByKey.get(key);
    if (queue) queue.push(resume);
    else this.waitingByKey.set(key, [resume]);
    this.queued += 1;
  }

  private release(key: string): void {
    this.running -= 1;
    const left = (this.runningByKey.get(key) ?? 1) - 1;
    if (left > 0) this.runningByKey.set(key, left);
    else this.runningByKey.delete(key);
    const next = this.nextKey();
    if (next !== undefined) {
      const queue = this.waitingByKey.get(next) as (() => void)[];
      const resume = queue.shift() as () => void;
      if (queue.length === 0) this.waitingByKey.delete(next);
      this.queued -= 1;
      this.start(next);
      resume();
    }
    // A key with nothing running or waiting is forgotten: it comes back as one never served (it was idle).
    if (!this.runningByKey.has(key) && !this.waitingByKey.has(key)) this.lastTurn.delete(key);
  }

  /** The waiting key served least recently (a few tenants wait at once: a scan is cheap). */
  private nextKey(): string | undefined {
    let best: string | undefined;
    let bestTurn = Number.POSITIVE_INFINITY;
    for (const key of this.waitingByKey.keys()) {
      const turn = this.lastTurn.get(key) ?? 0;
      if (turn < bestTurn) {
        best = key;
        bestTurn = turn;
      }
    }
    return best;
  }
}
