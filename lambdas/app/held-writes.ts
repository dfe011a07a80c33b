// Counts held a moment and written together (the delivery worker's figures, the send worker's copies sent): a
// process adds what happened under a key (a webhook and hour, a tenant, day and domain), what shares a key is merged
// in memory, and everything held is written at once, one write per key, once the oldest has been held `maxHoldMs`
// (when the next add or `settle()` finds it due, or, with `timer`, by a timer) or when `flush()` is asked. Writes
// report their own failures (`write` must not throw): a figure, not a ledger, so a write that fails or a process
// frozen before it writes loses those counts, never doubles them.
import type { Clock } from './ports';

export interface HeldWritesOptions<T> {
  /** Held at most this long before it is written. */
  readonly maxHoldMs: number;
  /** Also write on a timer, so a process that goes quiet (a Lambda container until it is thawed) writes what it holds. */
  readonly timer?: boolean;
  /** Writes one key's merged counts; handles its own failure. */
  readonly write: (held: T) => Promise<void>;
}

export class HeldWrites<T> {
  private held = new Map<string, T>();
  private heldSince: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly clock: Clock,
    private readonly options: HeldWritesOptions<T>,
  ) {}

  /** Holds `counts` under `key`, merged (`merge(held, counts)`) into what is already held there. */
  add(key: string, counts: T, merge: (held: T, counts: T) => T): void {
    const held = this.held.get(key);
    this.held.set(key, held === undefined ? counts : merge(held, counts));
    const now = this.clock.now();
    this.heldSince ??= now;
    if (now - this.heldSince >= this.options.maxHoldMs) this.write();
    else if (this.options.timer && !this.timer) {
      this.timer = setTimeout(() => this.write(), this.options.maxHoldMs);
      this.timer.unref?.();
    }
  }

  /** Writes what has been held long enough, and waits for every write under way (the end of an invocation). */
  async settle(): Promise<void> {
    if (this.heldSince !== null && this.clock.now() - this.heldSince >= this.options.maxHoldMs) this.write();
    while (this.writing.size) await Promise.all([...this.writing]);
  }

  /** Writes everything held and waits for it (the end of a batch of sends; a runtime that stops; tests). */
  async flush(): Promise<void> {
    this.write();
    await this.settle();
  }

  private write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const groups = [...this.held.values()];
    this.held = new Map();
    this.heldSince = null;
    for (const counts of groups) {
      const written: Promise<void> = this.options.write(counts).finally(() => this.writing.delete(written));
      this.writing.add(written);
    }
  }
}
