// The shared lane's bypass (issue 29, AWS; lambdas/manifest.ts DELIVERIES_BYPASS): first attempts skip a backlog.
// SQS hands out a standard queue's oldest messages first, so a fresh first attempt queued behind a backlog (a
// million jobs left by an outage of the delivery function) waits until the lane has received all of it, however
// fast the lane skims it into the slow lane. While the deliveries queue is behind (it holds `behindMessages` ready
// or more) and the bypass holds fewer, first attempts sent without a delay go to the bypass queue, which the same
// worker consumes as the shared lane; once the deliveries queue is back under the mark they go to it again.
// Retries, moves and delayed jobs always go to the deliveries queue. Each process asks each queue's depth at most
// once every `checkEveryMs` (one answer shared by every send meanwhile); a failed look stays with the deliveries
// queue, as before the bypass.
import type { Clock } from '../ports';
import type { DeliveryJob, DeliveryQueue } from './ports';

/** How many messages a queue holds ready now (SQS: ApproximateNumberOfMessages). */
export interface QueueDepth {
  ready(): Promise<number>;
}

export interface BypassOptions {
  readonly behindMessages: number;
  readonly checkEveryMs: number;
}

export class BypassDeliveryQueue implements DeliveryQueue {
  private checkedAt = Number.NEGATIVE_INFINITY;
  private bypassing: Promise<boolean> = Promise.resolve(false);

  constructor(
    private readonly main: { readonly queue: DeliveryQueue; readonly depth: QueueDepth },
    private readonly bypass: { readonly queue: DeliveryQueue; readonly depth: QueueDepth },
    private readonly clock: Clock,
    private readonly options: BypassOptions,
  ) {}

  async send(jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void> {
    const fresh = (delaySeconds ?? 0) > 0 ? [] : jobs.filter((job) => job.attempt === 1);
    if (fresh.length === 0 || !(await this.behind())) return this.main.queue.send(jobs, delaySeconds);
    const rest = jobs.filter((job) => !fresh.includes(job));
    await Promise.all([this.bypass.queue.send(fresh), rest.length ? this.main.queue.send(rest) : undefined]);
  }

  /** Whether first attempts go to the bypass now (one look every checkEveryMs, shared by the sends meanwhile). */
  private behind(): Promise<boolean> {
    const now = this.clock.now();
    if (now - this.checkedAt >= this.options.checkEveryMs) {
      this.checkedAt = now;
      this.bypassing = this.look().catch(() => false);
    }
    return this.bypassing;
  }

  private async look(): Promise<boolean> {
    const main = await this.main.depth.ready();
    if (main < this.options.behindMessages) return false;
    return (await this.bypass.depth.ready()) < main;
  }
}
