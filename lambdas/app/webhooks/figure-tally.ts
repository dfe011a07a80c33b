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
import { HeldWrites } from '../held-writes';
import type { Clock } from '../ports';
import type { DeliveryFigureStore } from './delivery-figures';

/** Held at most this long before it is written. */
export const FIGURE_TALLY_MAX_HOLD_MS = 5_000;

interface Held {
  readonly webhookId: string;
  readonly figures: HourFigures;
  readonly spread: string;
}

export class FigureTally {
  private readonly held: HeldWrites<Held>;

  constructor(
    store: Pick<DeliveryFigureStore, 'add'>,
    clock: Clock,
    options: {
      readonly maxHoldMs?: number;
      /** Told of a write that failed (after the SDK's retries) and how many attempts it lost. Nothing is thrown. */
      readonly failed?: (error: unknown, lost: { readonly webhookId: string; readonly attempts: number }) => void;
    } = {},
  ) {
    this.held = new HeldWrites(clock, {
      maxHoldMs: options.maxHoldMs ?? FIGURE_TALLY_MAX_HOLD_MS,
      timer: true,
      write: ({ webhookId, figures, spread }) =>
        store.add(webhookId, figures.hour, figures, spread).catch((error: unknown) => {
          const attempts = figures.succeeded + figures.retrying + figures.failed;
          options.failed?.(error, { webhookId, attempts });
        }),
    });
  }

  /** Holds one attempt (made at `at`), `spread` its delivery and attempt (which shard the write goes to). */
  add(attempt: { readonly webhookId: string; readonly at: number; readonly spread: string }, figure: AttemptFigure) {
    const hour = hourOf(attempt.at);
    const counts = { webhookId: attempt.webhookId, figures: hourOfAttempt(hour, figure), spread: attempt.spread };
    this.held.add(`${attempt.webhookId}|${hour}`, counts, (held, one) => ({
      ...held,
      figures: addFigures(held.figures, one.figures),
    }));
  }

  /** The end of a worker's invocation: writes what has been held long enough, and waits for every write under way. */
  settle(): Promise<void> {
    return this.held.settle();
  }

  /** Writes everything held and waits for it (tests; a runtime that stops). */
  flush(): Promise<void> {
    return this.held.flush();
  }
}
