// A delivery queue for one batch of events: the jobs each event's fan-out sends are held until every event of
// the batch has sent its own or finished without sending, then go out in sends of 10 (one SendMessageBatch
// each, all at once), so a batch of one-job events costs one request per 10 jobs instead of one per event, and a
// batch of 500 jobs waits one round trip, not 50.
import type { DeliveryJob, DeliveryQueue } from './ports';

/** Jobs a send carries: SQS's 10 entries per SendMessageBatch. */
export const GATHERED_SEND_JOBS = 10;

interface Held {
  readonly jobs: readonly DeliveryJob[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One member per event of the batch. A member's `send` resolves once the sends carrying its jobs succeeded and
 * rejects if any of them failed (that event alone is then retried by SQS); `done` says the event will send no
 * more (call it when its processing settles). Jobs with a delay, and jobs sent after the gathered flush, go
 * out at once: only the first fan-out of a batch is gathered.
 */
export interface GatheredMember {
  readonly queue: DeliveryQueue;
  done(): void;
}

export class GatheredDeliveryQueue {
  private readonly held: Held[] = [];
  private waiting: number;
  private flushed = false;

  /** `members`: the batch's events; the flush waits for each to send or be done. */
  constructor(
    private readonly inner: DeliveryQueue,
    members: number,
  ) {
    this.waiting = members;
    if (members === 0) this.flushed = true;
  }

  member(): GatheredMember {
    let arrived = false;
    const arrive = () => {
      if (arrived) return;
      arrived = true;
      this.waiting -= 1;
      if (this.waiting === 0) void this.flush();
    };
    return {
      queue: {
        send: (jobs, delaySeconds) => {
          if (this.flushed || (delaySeconds ?? 0) > 0 || arrived) {
            arrive();
            return this.inner.send(jobs, delaySeconds);
          }
          const sent = new Promise<void>((resolve, reject) => this.held.push({ jobs, resolve, reject }));
          arrive();
          return sent;
        },
      },
      done: arrive,
    };
  }

  private async flush(): Promise<void> {
    this.flushed = true;
    const held = this.held.splice(0);
    const jobs = held.flatMap((h, owner) => h.jobs.map((job) => ({ job, owner })));
    const failures = new Map<number, unknown>();
    const chunks: (typeof jobs)[] = [];
    for (let i = 0; i < jobs.length; i += GATHERED_SEND_JOBS) chunks.push(jobs.slice(i, i + GATHERED_SEND_JOBS));
    const results = await Promise.allSettled(chunks.map((chunk) => this.inner.send(chunk.map((c) => c.job))));
    // A refused send fails the events whose jobs it carried; the other sends went regardless.
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') continue;
      for (const { owner } of chunks[i] ?? []) if (!failures.has(owner)) failures.set(owner, result.reason);
    }
    for (const [owner, h] of held.entries()) {
      if (failures.has(owner)) h.reject(failures.get(owner));
      else h.resolve();
    }
  }
}
