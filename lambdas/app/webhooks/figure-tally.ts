// The delivery worker's figures, held a moment and written together (issue 31): a worker process (a Lambda
// container, the local runtime) adds each automatic attempt to the hourly figures it holds per webhook, and writes
// them as one ADD per webhook and hour once the oldest has been held `maxHoldMs` (5 s: at the end of the invocation
// that finds them due, or by a timer). A webhook's attempts of those seconds cost one write, not one each: at five
// jobs a batch a write per attempt would have cost $0.63 more per million deliveries, and a 1 s hold $0.11
// (docs/benchmarks.md, "Delivery figures (issue 31)"). What a container holds when it is frozen and never thawed again (at
// most its last 5 s of attempts) is lost: the figures may undercount, never overcount. Manual retries, test sends and recovery steps are written
// at once (countAttempt): they are few, and an API request has no batch end.
import {
  type AttemptFigure,
  addFigures,
  type HourFigures,
  hourOf,
  hourOfAttempt,
} from '../../domain/webhooks/delivery-figures';
import type { Clock } from '../ports';
import type { DeliveryFigureStore } from './delivery-figures';

/** Held at most this long before it is written. */
export const FIGURE_TALLY_MAX_HOLD_MS = 5_000;

interface Held {
  readonly webhookId: string;
  figures: HourFigures;
  readonly spread: string;
}

export class FigureTally {
  private held = new Map<string, Held>();
  private heldSince: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<DeliveryFigureStore, 'add'>,
    private readonly clock: Clock,
    private readonly options: {
      readonly maxHoldMs?: number;
      /** Told of a write that failed (after the SDK's retries) and how many attempts it lost. Nothing is thrown. */
      readonly failed?: (error: unknown, lost: { readonly webhookId: string; readonly attempts: number }) => void;
    } = {},
  ) {}

  private get maxHoldMs() {
    return this.options.maxHoldMs ?? FIGURE_TALLY_MAX_HOLD_MS;
  }

  /** Holds one attempt (made at `at`), `spread` its delivery and attempt (which shard the write goes to). */
  add(attempt: { readonly webhookId: string; readonly at: number; readonly spread: string }, figure: AttemptFigure) {
    const hour = hourOf(attempt.at);
    const key = `${attempt.webhookId}|${hour}`;
    const one = hourOfAttempt(hour, figure);
    const held = this.held.get(key);
    if (held) held.figures = addFigures(held.figures, one);
    else this.held.set(key, { webhookId: attempt.webhookId, figures: one, spread: attempt.spread });
    const now = this.clock.now();
    this.heldSince ??= now;
    if (now - this.heldSince >= this.maxHoldMs) this.write();
    else if (!this.timer) {
      // A process that goes quiet still writes what it holds (a Lambda container: when it is thawed again).
      this.timer = setTimeout(() => this.write(), this.maxHoldMs);
      this.timer.unref?.();
    }
  }

  /** The end of a worker's invocation: writes what has been held long enough, and waits for every write under way. */
  async settle(): Promise<void> {
    if (this.heldSince !== null && this.clock.now() - this.heldSince >= this.maxHoldMs) this.write();
    while (this.writing.size) await Promise.all([...this.writing]);
  }

  /** Writes everything held and waits for it (tests; a runtime that stops). */
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
    for (const { webhookId, figures, spread } of groups) {
      const attempts = figures.succeeded + figures.retrying + figures.failed;
      const written: Promise<void> = this.store
        .add(webhookId, figures.hour, figures, spread)
        .catch((error: unknown) => this.options.failed?.(error, { webhookId, attempts }))
        .finally(() => this.writing.delete(written));
      this.writing.add(written);
    }
  }
}
