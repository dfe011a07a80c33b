// At most `perKey` tasks of one key (an account) at a time, the others waiting their turn in arrival order: the
// local gateway runs each account's requests through it, so one tenant's burst of heavy requests takes a bounded
// share of the one process (and of its embedded DynamoDB's thread) and never stalls another tenant's requests.
// A task that waits on something else for long (a listen long-poll) steps `outside` its slot meanwhile.
import { AsyncLocalStorage } from 'node:async_hooks';

export class KeyedSlots {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  /** The key whose slot the code running now holds (through its awaits), if any. */
  private readonly held = new AsyncLocalStorage<string | undefined>();

  constructor(private readonly perKey: number) {}

  /** Runs `task` once one of the key's slots is free. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await this.held.run(key, task);
    } finally {
      this.release(key);
    }
  }

  /**
   * Runs `task` with the caller's slot of `key` given back meanwhile (when it holds one: else it just runs it), and
   * takes a slot again, in turn, before going on: a long wait holds none of the key's slots.
   */
  async outside<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (this.held.getStore() !== key) return task();
    this.release(key);
    try {
      return await this.held.run(undefined, task);
    } finally {
      await this.acquire(key);
    }
  }

  /** Tasks of the key running now. */
  inFlight(key: string): number {
    return this.running.get(key) ?? 0;
  }

  private async acquire(key: string): Promise<void> {
    const running = this.running.get(key) ?? 0;
    if (running < this.perKey) this.running.set(key, running + 1);
    // Full: wait for a slot handed over by a task that ends (the count stays, so no newcomer slips in between).
    else await new Promise<void>((resolve) => this.queueOf(key).push(resolve));
  }

  private queueOf(key: string): (() => void)[] {
    const queue = this.waiting.get(key) ?? [];
    this.waiting.set(key, queue);
    return queue;
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
